package httplimit

import "testing"

// trimValue drops around a value what Laravel's Str::trim, Ruby's strip or
// Python's str.strip drops, and nothing inside it or that none drops.
func TestTrimValueDropsWhatUpstreamsTrim(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"alice", "alice"},
		{" \t\n\v\f\ralice\x00", "alice"},
		{"\x1calice\x1f", "alice"},
		{"\u00a0\u2003alice\u3000\u0085", "alice"},
		{"\ufeff\u200balice\u200e\u2060", "alice"},
		{"\u3164alice\U000E0020", "alice"},
		{"al ice", "al ice"},
		{"\x01alice\x7f", "\x01alice\x7f"},
		{"alice\xff", "alice\xff"},
		{" \t ", ""},
	} {
		if got := trimValue(c.in); got != c.want {
			t.Errorf("trimValue(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
