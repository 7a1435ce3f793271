package migrate_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// egPolicies are two BackendTrafficPolicies and the HTTPRoute one targets:
// per user on the API's paths, per address for the free tier, and, through
// the Gateway, a local and a global count of every request.
const egPolicies = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: api}
spec:
  hostnames: [api.example.com]
  rules:
    - matches:
        - path: {type: PathPrefix, value: /api}
        - path: {type: Exact, value: /status/}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: users}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: api}]
  rateLimit:
    type: Global
    global:
      rules:
        - clientSelectors:
            - headers: [{name: x-user-id, type: Distinct}]
          limit: {requests: 2, unit: Hour}
        - clientSelectors:
            - headers: [{name: x-tier, value: free}]
              sourceCIDR: {type: Distinct, value: 0.0.0.0/0}
          limit: {requests: 1, unit: Hour}
          cost:
            request: {from: Number, number: 1}
            response: {from: Metadata, metadata: {namespace: io.envoy.ai_gateway, key: llm_total_token}}
        - clientSelectors:
            - sourceCIDR: {type: Distinct, value: 10.0.0.0/8}
          limit: {requests: 5, unit: Second}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: edge}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: eg}]
  rateLimit:
    local:
      rules:
        - limit: {requests: 1000, unit: Second}
          shadowMode: true
    global:
      rules:
        - limit: {requests: 100000, unit: Day}
`

func TestImportEnvoyGateway(t *testing.T) {
	runImportCases(t, []importCase{{
		name:   "policies on a route and a Gateway",
		format: "envoy-gateway",
		src:    egPolicies,
		limits: []string{"placeholder: fixed-window 1000000000 per 1s (shadow)"},
		rules: []string{
			"users-1-m1 paths=[/api /api/] hosts=[api.example.com] key=[header:X-User-Id] header_from=any fallback=skip | per-hour: fixed-window 2 per 1h0m0s",
			"users-1-m2 paths=[/status/{$}] hosts=[api.example.com] key=[header:X-User-Id] header_from=any fallback=skip | per-hour: fixed-window 2 per 1h0m0s",
			"users-2-m1 paths=[/api /api/] hosts=[api.example.com] headers=[{X-Tier free}] key=[ip/32/128] | per-hour: fixed-window 1 per 1h0m0s",
			"users-2-m2 paths=[/status/{$}] hosts=[api.example.com] headers=[{X-Tier free}] key=[ip/32/128] | per-hour: fixed-window 1 per 1h0m0s",
			"edge-g1 paths=[] key=[rule] | per-day: fixed-window 100000 per 24h0m0s",
			// The default bucket of a local policy: Envoy Gateway enforces it
			// whatever its shadowMode.
			"edge-l1 paths=[] key=[rule] | per-second: token-bucket 1000 per 1s burst 1000",
		},
		same: []string{"envoyproxy/ratelimit's fixed window of 2 per Hour", "Envoy's local rate limit is a token bucket of 1000",
			"shadowMode is not applied to a local rule without clientSelectors", "HTTPRoute api has 2 matches"},
		differs: []string{
			"it selects the clients of 10.0.0.0/8",
			"sourceCIDR 0.0.0.0/0 selects IPv4 clients only",
			"charges a response cost after the answer (from Metadata)",
			"it targets Gateway eg",
			"N replicas admit N times the limit",
		},
	}})
}

// The imported policies, served: a user's third request within the hour is
// refused and another user's is not; a request without the user header is
// not counted by that rule; the free tier is counted per address, on each
// match of the route apart, the pro tier not at all; paths outside the
// route are not limited by it.
func TestImportedEnvoyGatewayDecides(t *testing.T) {
	tr, err := migrate.Import("envoy-gateway", egPolicies, "eg.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := serveImported(t, tr)
	send := func(path, addr string, header ...string) int {
		r := httptest.NewRequest("GET", "http://api.example.com"+path, nil)
		r.RemoteAddr = addr + ":1234"
		for i := 0; i+1 < len(header); i += 2 {
			r.Header.Set(header[i], header[i+1])
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	for i, c := range []struct {
		path, addr string
		header     []string
		want       int
	}{
		{"/api/a", "192.0.2.1", []string{"X-User-Id", "ann"}, 200},
		{"/api/b", "192.0.2.2", []string{"X-User-Id", "ann"}, 200},
		{"/api/c", "192.0.2.3", []string{"X-User-Id", "ann"}, 429}, // ann's third within the hour, from anywhere
		{"/api/c", "192.0.2.3", []string{"X-User-Id", "bob"}, 200},
		{"/api/c", "192.0.2.3", nil, 200},
		{"/api/c", "192.0.2.3", nil, 200}, // no user: not counted by users-1
		{"/status/", "192.0.2.4", []string{"X-Tier", "free"}, 200},
		{"/api/x", "192.0.2.4", []string{"X-Tier", "free"}, 200}, // another match of the route: its own count
		{"/api/y", "192.0.2.4", []string{"X-Tier", "free"}, 429}, // the free tier: one an hour per address
		{"/api/x", "192.0.2.5", []string{"X-Tier", "free"}, 200},
		{"/api/x", "192.0.2.4", []string{"X-Tier", "pro"}, 200},
		{"/api/x", "192.0.2.4", []string{"X-Tier", "pro"}, 200},
		{"/other", "192.0.2.1", []string{"X-User-Id", "ann"}, 200}, // not the route's
		{"/status/more", "192.0.2.4", []string{"X-Tier", "free"}, 200},
	} {
		if got := send(c.path, c.addr, c.header...); got != c.want {
			t.Errorf("request %d (%s from %s, %v): %d, want %d", i, c.path, c.addr, c.header, got, c.want)
		}
	}
}

// Detect tells a BackendTrafficPolicy from a Traefik middleware, though
// both hold rateLimit:.
func TestDetectEnvoyGateway(t *testing.T) {
	if f, ok := migrate.Detect(egPolicies); !ok || f != migrate.FormatEnvoyGateway {
		t.Errorf("Detect: %q, %v", f, ok)
	}
	if _, err := migrate.Import("envoy-gateway", "kind: HTTPRoute\nmetadata: {name: api}\n", "eg.yaml"); err == nil || !strings.Contains(err.Error(), "no BackendTrafficPolicy") {
		t.Errorf("a file without a policy: %v", err)
	}
}

// egJWT is Envoy Gateway's rate limit by JWT claims: a SecurityPolicy
// verifies tokens and copies two claims into headers, which a
// BackendTrafficPolicy's rules count by (per user, per organization) or
// match (a tier).
const egJWT = `apiVersion: gateway.envoyproxy.io/v1alpha1
kind: SecurityPolicy
metadata: {name: jwt}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: api}]
  jwt:
    providers:
      - name: idp
        issuer: https://idp.example.com/
        audiences: [api]
        remoteJWKS: {uri: "https://idp.example.com/.well-known/jwks.json"}
        claimToHeaders:
          - {header: x-user, claim: sub}
          - {header: x-org, claim: org_id}
          - {header: x-tier, claim: tier}
      - name: partner
        remoteJWKS: {uri: "https://partner.example.com/jwks"}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: claims}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: api}]
  rateLimit:
    type: Global
    global:
      rules:
        - clientSelectors:
            - headers: [{name: x-user, type: Distinct}]
          limit: {requests: 100, unit: Minute}
        - clientSelectors:
            - headers: [{name: x-org, type: Distinct}, {name: x-tier, value: free}]
          limit: {requests: 1000, unit: Hour}
`

func TestImportEnvoyGatewayJWTClaims(t *testing.T) {
	runImportCases(t, []importCase{{
		name:   "rate limits by JWT claims",
		format: "envoy-gateway",
		src:    egJWT,
		limits: []string{"placeholder: fixed-window 1000000000 per 1s (shadow)"},
		rules: []string{
			"claims-1 paths=[] key=[user] | per-minute: fixed-window 100 per 1m0s",
			"claims-2 paths=[] headers=[{X-Tier free}] key=[claim:org_id] | per-hour: fixed-window 1000 per 1h0m0s",
		},
		same: []string{
			"tokens verified against https://idp.example.com/.well-known/jwks.json",
			"X-User is claim sub of the verified token",
			"X-Org is claim org_id of the verified token",
		},
		differs: []string{
			"refuses a request without a valid token (401)",
			"provider partner: sluice verifies the tokens of one issuer",
			`it selects X-Tier "free", which Envoy copied from claim tier`,
		},
	}})
	tr, err := migrate.Import("envoy-gateway", egJWT, "eg.yaml")
	if err != nil {
		t.Fatal(err)
	}
	files, err := tr.Files(true)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"  jwt:", `    jwks_url: "https://idp.example.com/.well-known/jwks.json"`, `    issuer: "https://idp.example.com/"`, `    audiences: ["api"]`} {
		if !strings.Contains(files[migrate.ConfigFile], want+"\n") && !strings.Contains(files[migrate.ConfigFile], want+" ") {
			t.Errorf("the configuration lacks %q:\n%s", want, files[migrate.ConfigFile])
		}
	}
}

// TestEnvoyGatewayReportSaysWhatToCompare: the rollout's watching step
// names where Envoy Gateway counts its refusals, as it does for every
// other format, so the shadow decisions have something to be compared
// with.
func TestEnvoyGatewayReportSaysWhatToCompare(t *testing.T) {
	tr, err := migrate.Import(migrate.FormatEnvoyGateway, egPolicies, "policies.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r := tr.Report()
	if strings.Contains(r, "against ;") || !strings.Contains(r, "over_limit") {
		t.Errorf("the rollout does not say what to compare sluice's shadow decisions with:\n%s", r)
	}
}
