package httplimit

import "testing"

// pairValue reads a pair of a query string or form body as url.ParseQuery
// does, and a pair url.ParseQuery refuses is named when an upstream that
// reads it anyway may take it for the field: its name, escapes that do not
// decode kept as they are, or a part of it split on ";".
func TestPairValueNamesThePairsUpstreamsMayReadAsTheField(t *testing.T) {
	for _, c := range []struct {
		pair, v   string
		named, ok bool
	}{
		{"username=alice", "alice", true, true},
		{"USER%4Eame=a+b%20c", "a b c", true, true},
		{"user.name=alice", "", false, true}, // PHP's user_name, not username
		{"password=100%", "", false, true},
		{"username=alice%zz", "", true, false},
		{"username%zz=alice", "", false, false},
		{"username=alice;x", "", true, false},
		{"x=1;username=alice", "", true, false},
		{"x=1;y=2", "", false, false},
		{"=", "", false, true},
		{"", "", false, true},
	} {
		v, named, ok := pairValue(c.pair, "username", phpVarOf("username"))
		if v != c.v || named != c.named || ok != c.ok {
			t.Errorf("pairValue(%q) = %q, named %v, ok %v; want %q, %v, %v", c.pair, v, named, ok, c.v, c.named, c.ok)
		}
	}
}
