package server_test

import "testing"

// Express's method-override, configured as its README shows it
// (methodOverride('X-HTTP-Method-Override')), reads the header's first
// comma-separated value, so "DELETE," and "DELETE,GET" are served as the
// DELETE; Symfony reads the whole value, which is no method. No method
// holds a "," (RFC 9110 §9.1: a method is a token, and "," is no tchar):
// forward-auth and /v1/check refuse such an override with a 400, nothing
// spent, as one that is not a method (docs/forward-auth.md, docs/api.md).
func TestAnOverrideHeaderListIsNoMethodOfItsOwn(t *testing.T) {
	for i, v := range []string{"DELETE,", "DELETE,GET", "delete,post"} {
		t.Run(v, func(t *testing.T) {
			got := judgeOverrideOn(t, newFixture(t, checkOverrideConfig), overrideCase{name: v, uri: "/api/items/x",
				header: map[string]string{"X-HTTP-Method-Override": v}}, i+1)
			for j, surface := range []string{"forward-auth", "/v1/check"} {
				if g := got[j+1]; g.status != 400 || g.remaining != "99" {
					t.Errorf("%s, POST with X-HTTP-Method-Override: %s: %d, remaining %s; want a 400 spending nothing (remaining 99)",
						surface, v, g.status, g.remaining)
				}
			}
		})
	}
}

// A described method is a token too: forward-auth's X-Forwarded-Method
// and the decision API's method refuse "DELETE,GET", a list, and a method
// of bytes outside ASCII with a 400, as they refuse one with a space.
func TestADescribedMethodIsAToken(t *testing.T) {
	f := newFixture(t, checkOverrideConfig)
	for _, m := range []string{"DELETE,GET", "DELETE,", "DÉLETE"} {
		r := f.do(t, "GET", "/v1/forward-auth", "", map[string]string{"X-Forwarded-For": "198.51.100.1", "X-Forwarded-Method": m, "X-Forwarded-Uri": "/api/items/x"})
		readAll(t, r)
		if r.StatusCode != 400 {
			t.Errorf("forward-auth, X-Forwarded-Method: %s: %d, want 400", m, r.StatusCode)
		}
		if st, _, raw := postCheck(t, f, `{"ip":"198.51.100.2","method":"`+m+`","path":"/api/items/x"}`); st != 400 {
			t.Errorf("/v1/check, method %s: %d %s, want 400", m, st, raw)
		}
	}
}
