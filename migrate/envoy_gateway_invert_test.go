package migrate_test

import (
	"net/http/httptest"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// A client selector's inverted header (invert: true) selects the requests
// whose header does not match, those without it included: the rule leaves
// out the requests that carry it.
func TestImportedEnvoyGatewayInvertedHeader(t *testing.T) {
	const src = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: api}
spec:
  hostnames: [api.example.com]
  rules:
    - matches: [{path: {type: PathPrefix, value: /api}}]
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: outside}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: api}]
  rateLimit:
    type: Global
    global:
      rules:
        - clientSelectors:
            - headers: [{name: x-internal, value: "yes", invert: true}]
          limit: {requests: 2, unit: Hour}
`
	tr, err := migrate.Import("envoy-gateway", src, "eg.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := serveImported(t, tr)
	var got []int
	for _, internal := range []string{"yes", "yes", "yes", "", "", "", "no"} {
		r := httptest.NewRequest("GET", "http://api.example.com/api/x", nil)
		r.RemoteAddr = "192.0.2.1:1234"
		if internal != "" {
			r.Header.Set("X-Internal", internal)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		got = append(got, w.Code)
	}
	want := []int{200, 200, 200, 200, 200, 429, 429}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("X-Internal yes ×3, none ×3, no: %v, want %v", got, want)
		}
	}
}
