package httplimit

import "testing"

// phpName gives the key PHP's php_register_variable_ex files a request
// variable under (main/php_variables.c): cut at a NUL, leading spaces
// dropped, '.' and ' ' as '_' before the first '[', an array's indexes
// kept, and a '[' that no ']' follows as '_' with each ' ', '.' and '['
// after it; "" for a variable PHP drops.
func TestPHPNameAsPHPFilesAVariable(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"user_email", "user_email"},
		{"user.email", "user_email"},
		{"user email", "user_email"},
		{"  user.email", "user_email"},
		{"user_email\x00junk", "user_email"},
		{"user[email]", "user[email]"},
		{"user.x[e.mail]", "user_x[e.mail]"},
		{"user[email", "user_email"},
		{"a.b[c.d e[f", "a_b_c_d_e_f"},
		{"[email]", ""},
		{"", ""},
	} {
		if got := phpName(c.in); got != c.want {
			t.Errorf("phpName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

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
