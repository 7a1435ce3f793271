package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A user whose requests all come from tokens of an issuer with a fixed
// plan of exempt.plans is exempt whatever it sends when nothing else can
// name a user: no caller (nor loopback) holds the check scope, so the
// decision API and forward-auth cannot send {"user": …}, and no user
// header is believed (none at all, or one no trusted proxy can set).
// Every request of user:alice is decided on plan internal and exempt, so
// penalizing her is a 409 and GET /v1/keys/user:alice says "exempt" (the
// default plan counted among her plans made it a 200 writing a box no
// request checks).
func TestATokenUserOfAnExemptIssuerPlanIsExemptWhenNothingElseNamesAUser(t *testing.T) {
	for _, c := range []struct{ name, identity string }{
		{"no user header", ""},
		{"a user header no proxy is trusted for", "  user_header: X-User\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := newIDP(t, "k1")
			cfg := `
identity:
` + c.identity + `  jwt:
    jwks_url: ` + p.srv.URL + `
    issuer: https://idp.example.com/
    audiences: [api]
    plan: internal
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m}
  internal:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m}
default_plan: free
penalty: {refusals: 20, within: 1m, for: 10m}
exempt:
  plans: [internal]
admin:
  loopback_scopes: []
  callers:
    - {name: ops, token_sha256: ` + sha256Hex(testToken) + `, scopes: [read, admin]}
`
			f := newFixture(t, cfg)
			tok := sign(t, p.key, p.kid, map[string]any{"iss": "https://idp.example.com/", "aud": "api", "sub": "alice",
				"exp": noon.Add(time.Hour).Unix()})
			auth := map[string]string{"Authorization": "Bearer " + tok, "X-User": "alice"}

			r := f.do(t, http.MethodPost, "/v1/keys/user:alice?action=penalize", "", nil)
			var pr struct{ Detail, Exempt string }
			json.NewDecoder(r.Body).Decode(&pr)
			var st struct{ Exempt string }
			json.NewDecoder(f.do(t, http.MethodGet, "/v1/keys/user:alice", "", nil).Body).Decode(&st)

			// What the middleware does: alice's request (her token) is
			// exempt by plan, even after the penalize, and the box
			// written is never checked.
			resp := f.do(t, http.MethodGet, "/api/search", "", auth)
			if resp.StatusCode != http.StatusOK || hasRateLimitHeaders(resp.Header) {
				t.Fatalf("alice's request: %d, headers %v; want 200 with no RateLimit headers (exempt by plan)", resp.StatusCode, resp.Header)
			}
			if r.StatusCode != http.StatusConflict || pr.Exempt != "plan" || st.Exempt != "plan" {
				t.Errorf("penalize user:alice: %d, exempt %q (%s); GET: exempt %q; want 409 and \"plan\" in both: "+
					"every request of user:alice is decided on the exempt plan internal, so the box written holds none",
					r.StatusCode, pr.Exempt, pr.Detail, st.Exempt)
			}
		})
	}
}

func hasRateLimitHeaders(h http.Header) bool {
	for name := range h {
		if strings.HasPrefix(strings.ToLower(name), "ratelimit") || strings.HasPrefix(strings.ToLower(name), "x-ratelimit") {
			return true
		}
	}
	return false
}
