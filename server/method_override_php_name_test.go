package server_test

import "testing"

// PHP decodes a query pair's name escape by escape, keeping one that does
// not decode ("%zz", a lone "%") as it is, and names the variable up to
// its first NUL (php_register_variable_ex reads it with strlen):
// "_method%00%zz=DELETE" is $_GET['_method'] = "DELETE", so Laravel
// serves the POST as the DELETE. url.QueryUnescape refuses the whole
// name; read as sent it names nothing, and the POST would pay 1 for the
// DELETE of 5. docs/rules.md ("Method overrides"): a _method pair that
// does not parse (an escape that does not decode, which PHP reads anyway,
// in its name too) is refused with a 400 spending nothing, on the proxy,
// forward-auth and /v1/check alike.
func TestAMethodOverrideNamedWithANULAndABadEscapeIsRefused(t *testing.T) {
	for i, uri := range []string{"/api/items/x?_method%00%zz=DELETE", "/api/items/x?.method%00%=DELETE"} {
		got := judgeOverrideOn(t, newFixture(t, checkOverrideConfig), overrideCase{name: uri, uri: uri}, i+1)
		for j, surface := range []string{"proxy", "forward-auth", "/v1/check"} {
			if g := got[j]; g.status != 400 || g.remaining != "99" {
				t.Errorf("%s, POST %s: %d, remaining %s; want a 400 spending nothing (remaining 99)", surface, uri, g.status, g.remaining)
			}
		}
	}
}
