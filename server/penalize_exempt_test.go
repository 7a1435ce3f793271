package server_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"testing"
)

// An exempt client's requests are never decided, so the penalty box is
// never checked for them: POST /v1/keys/{subject}?action=penalize of a
// client an exemption covers (exempt.keys, exempt.users, exempt.plans by a
// listed key's plan while no caller may choose another, exempt.addresses
// by an address group) would report a box that holds none of its
// requests. It is a 409 whose problem names the exemption, and GET
// /v1/keys/{subject} says the client is exempt. A client that is not
// exempt is boxed as before, and so is an address group that holds a
// trusted proxy's address, even inside an exempt range: a client the
// proxy reports as an unreadable hop is limited as the proxy, never
// exempt.
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
admin:
  callers:
    - {name: tests, token_sha256: ` + sha256Hex(testToken) + `, scopes: [read, check, admin]}
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

// A plan exemption covers a listed key only while its requests are all
// decided on its plan. A decision API caller holding override_plan (the
// fixture's caller does) decides them on any plan it names: those on
// plan free are decided, and the penalty box is checked for the key's
// subject. Penalizing it boxes it, and GET /v1/keys/{subject}?plan=P says
// whether requests decided on P are exempt.
func TestPenalizingAKeyOfAnExemptPlanBoxesItWhenCallersChooseItsPlan(t *testing.T) {
	cfg := `
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m}
  internal:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m}
default_plan: free
keys:
  - {name: batch, sha256: ` + sha256Hex("batch-key") + `, plan: internal}
penalty: {refusals: 20, within: 1m, for: 10m}
exempt:
  plans: [internal]
`
	f := newFixture(t, cfg)
	r := f.do(t, http.MethodPost, "/v1/keys/name:batch?action=penalize", "", nil)
	var p struct{ Detail, Exempt string }
	json.NewDecoder(r.Body).Decode(&p)
	if r.StatusCode != http.StatusOK {
		t.Fatalf("penalize name:batch: %d, exempt %q (%s); want 200: requests on plan free are decided", r.StatusCode, p.Exempt, p.Detail)
	}
	for _, c := range []struct{ query, want string }{{"", ""}, {"?plan=free", ""}, {"?plan=internal", "plan"}} {
		var st struct{ Exempt string }
		json.NewDecoder(f.do(t, http.MethodGet, "/v1/keys/name:batch"+c.query, "", nil).Body).Decode(&st)
		if st.Exempt != c.want {
			t.Errorf("GET /v1/keys/name:batch%s: exempt %q, want %q", c.query, st.Exempt, c.want)
		}
	}
	var out struct{ Allowed, Exempt bool }
	if err := json.NewDecoder(f.do(t, http.MethodPost, "/v1/check", `{"api_key":"batch-key","plan":"free","path":"/api/search"}`, nil).Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if out.Allowed || out.Exempt {
		t.Errorf("the boxed key's check on plan free: allowed %v, exempt %v; want refused", out.Allowed, out.Exempt)
	}
}

// A user on the default plan and an address group on the anonymous plan,
// when that plan is in exempt.plans and nothing lets a request choose
// another (no trusted plan header, no token, no caller holding
// override_plan), are exempt whatever they send: penalizing them is a
// 409 naming the plan, and GET /v1/keys/{subject} says "plan". With a
// plan header a trusted proxy sets, their requests may be on any plan:
// they are boxed, and a request on a plan that is not exempt is refused.
func TestPenalizingAClientOfAnExemptDefaultOrAnonymousPlan(t *testing.T) {
	cfg := `
identity:
  trusted_proxies: [127.0.0.1/32]
  user_header: X-User%s
plans:
  staff:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m}
  public:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m}
  other:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m}
default_plan: staff
anonymous_plan: public
penalty: {refusals: 20, within: 1m, for: 10m}
exempt:
  plans: [staff, public]
admin:
  callers:
    - {name: tests, token_sha256: ` + sha256Hex(testToken) + `, scopes: [read, check, admin]}
`
	for _, c := range []struct {
		name, planHeader, subject string
		header                    map[string]string
	}{
		{"a user", "", "user:alice", map[string]string{"X-User": "alice", "X-Forwarded-For": "198.51.100.1"}},
		{"an address group", "", "ip:198.51.100.1", map[string]string{"X-Forwarded-For": "198.51.100.1"}},
		{"a user, a plan header", "\n  plan_header: X-Plan", "user:alice", map[string]string{"X-User": "alice", "X-Forwarded-For": "198.51.100.1"}},
		{"an address group, a plan header", "\n  plan_header: X-Plan", "ip:198.51.100.1", map[string]string{"X-Forwarded-For": "198.51.100.1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, fmt.Sprintf(cfg, c.planHeader))
			r := f.do(t, http.MethodPost, "/v1/keys/"+c.subject+"?action=penalize", "", nil)
			var p struct{ Detail, Exempt string }
			json.NewDecoder(r.Body).Decode(&p)
			var st struct{ Exempt string }
			json.NewDecoder(f.do(t, http.MethodGet, "/v1/keys/"+c.subject, "", nil).Body).Decode(&st)
			if c.planHeader == "" {
				if r.StatusCode != http.StatusConflict || p.Exempt != "plan" || st.Exempt != "plan" {
					t.Errorf("penalize %s: %d, exempt %q (%s); GET: exempt %q; want 409 and \"plan\" in both", c.subject, r.StatusCode, p.Exempt, p.Detail, st.Exempt)
				}
				if got := f.do(t, http.MethodGet, "/api/search", "", c.header).StatusCode; got != http.StatusOK {
					t.Errorf("its request: %d, want 200 (exempt by plan)", got)
				}
				return
			}
			h := maps.Clone(c.header)
			h["X-Plan"] = "other"
			if r.StatusCode != http.StatusOK || st.Exempt != "" {
				t.Fatalf("penalize %s: %d (%s); GET: exempt %q; want 200 and no exemption", c.subject, r.StatusCode, p.Detail, st.Exempt)
			}
			if got := f.do(t, http.MethodGet, "/api/search", "", h).StatusCode; got != http.StatusTooManyRequests {
				t.Errorf("its request on another plan: %d, want 429 (boxed)", got)
			}
		})
	}
}
