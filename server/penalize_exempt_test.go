package server_test

import (
	"encoding/json"
	"net/http"
	"testing"
)

// An exempt client's requests are never decided, so the penalty box is
// never checked for them: POST /v1/keys/{subject}?action=penalize of a
// client an exemption covers (exempt.keys, exempt.users, exempt.plans by a
// listed key's plan, exempt.addresses by an address group) would report a
// box that holds none of its requests. It is a 409 whose problem names the
// exemption, and GET /v1/keys/{subject} says the client is exempt. A
// client that is not exempt is boxed as before, and so is an address
// group that holds a trusted proxy's address, even inside an exempt
// range: a client the proxy reports as an unreadable hop is limited as
// the proxy, never exempt.
func TestPenalizingAnExemptClientIsRefused(t *testing.T) {
	cfg := `
identity:
  trusted_proxies: [127.0.0.1/32]
  user_header: X-User
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m}
  internal:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m}
keys:
  - {name: monitoring, sha256: ` + sha256Hex("monitoring-key") + `, plan: free}
  - {name: batch, sha256: ` + sha256Hex("batch-key") + `, plan: internal}
  - {name: acme, sha256: ` + sha256Hex("acme-key") + `, plan: free}
penalty: {refusals: 20, within: 1m, for: 10m}
exempt:
  keys: [monitoring]
  users: [ops-bot]
  plans: [internal]
  addresses: [192.0.2.0/24, 127.0.0.0/8]
`
	for _, c := range []struct {
		name, subject, exempt string
		header                map[string]string
	}{
		{"exempt key", "name:monitoring", "key", map[string]string{"X-API-Key": "monitoring-key", "X-Forwarded-For": "198.51.100.1"}},
		{"exempt user", "user:ops-bot", "user", map[string]string{"X-User": "ops-bot", "X-Forwarded-For": "198.51.100.1"}},
		{"exempt plan", "name:batch", "plan", map[string]string{"X-API-Key": "batch-key", "X-Forwarded-For": "198.51.100.1"}},
		{"exempt address", "ip:192.0.2.7", "address", map[string]string{"X-Forwarded-For": "192.0.2.7"}},
		{"not exempt", "name:acme", "", map[string]string{"X-API-Key": "acme-key", "X-Forwarded-For": "198.51.100.1"}},
		{"trusted proxy's address", "ip:127.0.0.1", "", map[string]string{"X-Forwarded-For": "unknown"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, cfg)
			r := f.do(t, http.MethodPost, "/v1/keys/"+c.subject+"?action=penalize", "", nil)
			var p struct {
				Status         int
				Detail, Exempt string
			}
			if err := json.NewDecoder(r.Body).Decode(&p); err != nil {
				t.Fatal(err)
			}
			var st struct{ Exempt string }
			if err := json.NewDecoder(f.do(t, http.MethodGet, "/v1/keys/"+c.subject, "", nil).Body).Decode(&st); err != nil {
				t.Fatal(err)
			}
			if st.Exempt != c.exempt {
				t.Errorf("GET /v1/keys/%s: exempt %q, want %q", c.subject, st.Exempt, c.exempt)
			}
			got := f.do(t, http.MethodGet, "/api/search", "", c.header).StatusCode
			if c.exempt != "" {
				if r.StatusCode != http.StatusConflict || r.Header.Get("Content-Type") != "application/problem+json" || p.Status != 409 || p.Exempt != c.exempt {
					t.Errorf("penalize %s: %d %s, exempt %q (%s); want 409, a problem with exempt %q", c.subject, r.StatusCode,
						r.Header.Get("Content-Type"), p.Exempt, p.Detail, c.exempt)
				}
				if got != http.StatusOK {
					t.Errorf("the exempt client's request: %d, want 200", got)
				}
				return
			}
			if r.StatusCode != http.StatusOK || got != http.StatusTooManyRequests {
				t.Errorf("penalize %s: %d (%s), then its request %d; want 200 and 429", c.subject, r.StatusCode, p.Detail, got)
			}
		})
	}
}
