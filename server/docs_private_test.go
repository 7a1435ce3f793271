package server_test

import (
	"strings"
	"testing"
)

// privateConfig is a configuration whose every private value holds
// "private" (or is an address of 10.0.0.0/8): exempt routes, addresses,
// keys, users and plans; trusted proxies; the headers a trusted layer sets;
// admin callers; key names.
const privateConfig = `
identity:
  trusted_proxies: [127.0.0.1/32, 10.77.0.0/16]
  user_header: X-Private-User
  plan_header: X-Private-Plan
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 3, window: 1m}
  staff:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m}
keys:
  - {name: private-key-name, sha256: 9f8cfdb17116bf0e2a44e071454f25594cb9b8737bf331e6a2f0b30550572f29, plan: free}
exempt:
  routes: ["GET /api/health", "private.corp.example/", "/private-ops/"]
  addresses: [10.99.0.0/16]
  keys: [private-key-name]
  users: [private-ops-bot]
  plans: [staff]
degradation:
  levels:
    critical: {enter: {in_flight: 2000}, leave: {in_flight: 1200}}
  classes:
    health: ["GET /private-lb-check"]
admin:
  callers:
    - {name: tests, token_sha256: 4c5dc9b7708905f77f5e5d16316b5dfb425e68cb326dcd55a860e90a7707031e, scopes: [read, check, override_plan, admin]}
    - {name: private-grafana, token_sha256: a1c2ab15d5b2ab65a8e40e9fb7ca8b8cc8a73a0b0f9c7bbf2f3bd3ee3e0f4f3a, scopes: [read]}
`

// /docs on the public listener tells a stranger the limits a client meets
// and how to behave, and nothing of what escapes them or whom sluice
// trusts: no exempt route (an internal path, a host that no limit applies
// to, which a client could name in its Host), no health check route the
// degradation levels never shed (a load balancer's, not a client's), no exempt address, key or
// user, no trusted proxy, no header a trusted layer sets, no caller or key
// name. An exempt plan's own page still says its clients are never limited.
func TestPublicDocsTellNothingPrivate(t *testing.T) {
	f := newFixture(t, privateConfig)
	for _, path := range []string{"/docs", "/docs?plan=free", "/docs?plan=staff", "/docs?plan=nope"} {
		page := readAll(t, f.do(t, "GET", path, "", nil))
		for _, secret := range []string{"private", "Private", "10.77.", "10.99.", "127.0.0.1", "/api/health", "tests"} {
			if i := strings.Index(page, secret); i >= 0 {
				t.Errorf("%s tells %q: …%s…", path, secret, page[max(0, i-120):min(len(page), i+120)])
			}
		}
	}
	if staff := readAll(t, f.do(t, "GET", "/docs?plan=staff", "", nil)); !strings.Contains(staff, `id="plan-exempt"`) {
		t.Error("the exempt plan's page does not say its clients are never limited")
	}
}
