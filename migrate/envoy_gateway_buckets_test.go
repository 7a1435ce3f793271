package migrate_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// egAPIRoute is an HTTPRoute of the paths under /api, which the policies
// below target.
const egAPIRoute = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: api}
spec:
  rules:
    - matches:
        - path: {type: PathPrefix, value: /api}
---
`

// Envoy Gateway writes a local policy's rule without clientSelectors as the
// route's default token bucket and the others as descriptors, with
// always_consume_default_token_bucket: false (internal/xds/translator/
// local_ratelimit.go): a request a selector rule matches is counted by that
// rule's bucket only, never by the default one. The import leaves the
// selected requests out of the default rule (except:): alice's two
// requests spend her bucket of 2 and leave the default bucket of 3 whole,
// so bob still gets 3.
func TestImportedEnvoyGatewayDefaultBucketLeavesOutSelectedRequests(t *testing.T) {
	src := egAPIRoute + `apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: local}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: api}]
  rateLimit:
    type: Local
    local:
      rules:
        - clientSelectors:
            - headers: [{name: x-user, value: alice}]
          limit: {requests: 2, unit: Minute}
        - limit: {requests: 3, unit: Minute}
`
	tr, err := migrate.Import("envoy-gateway", src, "eg.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := serveImported(t, tr)
	send := func(user string) int {
		r := httptest.NewRequest("GET", "http://api.example.com/api/x", nil)
		r.RemoteAddr = "192.0.2.1:1234"
		if user != "" {
			r.Header.Set("X-User", user)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	var got []int
	for _, u := range []string{"alice", "alice", "bob", "bob", "bob"} {
		got = append(got, send(u))
	}
	want := []int{200, 200, 200, 200, 200}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("statuses %v, want %v: Envoy Gateway's default bucket does not count the requests a selector rule matched", got, want)
		}
	}
}

// A local rule selecting a Distinct header takes every request carrying
// the header from the default bucket (each value its own bucket in Envoy):
// the import leaves out the requests with the header, whatever its value.
// One selecting by the client's address (sourceCIDR) cannot be left out by
// an except: entry: its requests stay in the default rule, and the report
// says so (the IPv4 clients below are not its: the default bucket counts
// them in Envoy Gateway too).
func TestImportedEnvoyGatewayDefaultBucketLeavesOutDistinctHeaders(t *testing.T) {
	src := egAPIRoute + `apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: local}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: api}]
  rateLimit:
    type: Local
    local:
      rules:
        - clientSelectors:
            - headers: [{name: x-tenant, type: Distinct}]
          limit: {requests: 1, unit: Minute}
        - clientSelectors:
            - sourceCIDR: {type: Distinct, value: "::/0"}
          limit: {requests: 5, unit: Minute}
        - limit: {requests: 1, unit: Minute}
`
	tr, err := migrate.Import("envoy-gateway", src, "eg.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := differsLines(tr, "rule 2 (by the client's address (sourceCIDR))"); len(got) != 1 {
		t.Errorf("the default rule does not report the sourceCIDR rule's requests it still counts: %q", got)
	}
	expectStatuses(t, serveImported(t, tr), []sent{
		{"/api/x", "acme", "192.0.2.1", 200},
		{"/api/x", "umbrella", "192.0.2.1", 200}, // each tenant its own bucket, the default one untouched
		{"/api/x", "", "192.0.2.1", 200},
		{"/api/x", "", "192.0.2.1", 429}, // the default bucket of 1
	})
}

// sourceCIDR 0.0.0.0/0 selects IPv4 clients only: Envoy Gateway writes it as
// a masked_remote_address action with v4_prefix_mask_len 0 and the
// descriptor value "0.0.0.0/0", which an IPv6 client's masked address
// (its /128) never equals; ::/0 likewise IPv6 clients only. sluice's rules
// select no address family, so the import keys the rule by ip/32/128 for
// every client and reports that the other family's clients are limited
// too, which Envoy Gateway never limited.
func TestImportEnvoyGatewaySourceCIDROfOneFamilyIsReported(t *testing.T) {
	src := egAPIRoute + `apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: perip}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: api}]
  rateLimit:
    type: Global
    global:
      rules:
        - clientSelectors:
            - sourceCIDR: {type: Distinct, value: 0.0.0.0/0}
          limit: {requests: 1, unit: Hour}
`
	tr, err := migrate.Import("envoy-gateway", src, "eg.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := serveImported(t, tr)
	send := func(addr string) int {
		r := httptest.NewRequest("GET", "http://api.example.com/api/x", nil)
		r.RemoteAddr = addr
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	if a, b := send("192.0.2.1:1234"), send("192.0.2.1:1234"); a != 200 || b != 429 {
		t.Fatalf("IPv4 client: %d %d, want 200 429", a, b)
	}
	if got := differsLines(tr, "sourceCIDR 0.0.0.0/0 selects IPv4 clients only"); len(got) != 1 || !strings.Contains(got[0], "IPv6 clients are limited by this rule too") {
		t.Errorf("the report does not say that IPv6 clients are limited too: %q", got)
	}
}

// Envoy Gateway names each route it writes of an HTTPRoute by its rule and
// match (irRouteName: "httproute/<ns>/<name>/rule/<i>/match/<j>"), and a
// policy's global rule that is not shared counts under that name
// (buildRouteRateLimits: the descriptor key is route.Name); a local rule is
// a LocalRateLimit in each such route's typed_per_filter_config. So the
// matches /a and /b of one HTTPRoute each have their own count of 1 an
// hour. The import writes a rule per match, each its own count, so a
// request to /b after one to /a is admitted, as Envoy Gateway admits it.
func TestImportedEnvoyGatewayEachMatchCountsApart(t *testing.T) {
	src := `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: api}
spec:
  rules:
    - matches:
        - path: {type: PathPrefix, value: /a}
        - path: {type: PathPrefix, value: /b}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: hourly}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: api}]
  rateLimit:
    type: Global
    global:
      rules:
        - limit: {requests: 1, unit: Hour}
`
	tr, err := migrate.Import("envoy-gateway", src, "eg.yaml")
	if err != nil {
		t.Fatal(err)
	}
	expectStatuses(t, serveImported(t, tr), []sent{
		{"/a/x", "", "192.0.2.1", 200},
		{"/b/x", "", "192.0.2.1", 200}, // match /b's own count
		{"/a/y", "", "192.0.2.1", 429},
	})
}

// clientSelectors may select by method, path or query parameter besides
// headers and sourceCIDR (Envoy Gateway's buildRateLimitRule reads
// match.Methods and match.Path). The import matches the methods
// (match.methods), so a rule of POST requests counts no GET: two GETs are
// admitted, and a POST after a POST is refused.
func TestImportedEnvoyGatewayMethodSelectorSelects(t *testing.T) {
	src := egAPIRoute + `apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: posts}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: api}]
  rateLimit:
    type: Global
    global:
      rules:
        - clientSelectors:
            - methods: [{value: POST}]
          limit: {requests: 1, unit: Hour}
`
	tr, err := migrate.Import("envoy-gateway", src, "eg.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := serveImported(t, tr)
	expectStatuses(t, h, []sent{
		{"/api/x", "", "192.0.2.1", 200},
		{"/api/x", "", "192.0.2.1", 200}, // GET: not selected by a POST rule
	})
	if got := statusesOf(h, []string{"POST", "/api/x"}, []string{"POST", "/api/y"}); got[0] != 200 || got[1] != 429 {
		t.Errorf("two POSTs: %v, want [200 429]", got)
	}
}

// A path selector narrows the rule to the route's requests under that
// path, and an inverted one leaves them out (except:); a query parameter
// selector by Exact value has no sluice match and is reported, not
// imported.
func TestImportedEnvoyGatewayPathSelector(t *testing.T) {
	src := egAPIRoute + `apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: paths}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: api}]
  rateLimit:
    type: Global
    global:
      rules:
        - clientSelectors:
            - path: {type: PathPrefix, value: /api/orders}
          limit: {requests: 1, unit: Hour}
        - clientSelectors:
            - path: {type: PathPrefix, value: /api/public, invert: true}
          limit: {requests: 2, unit: Hour}
        - clientSelectors:
            - queryParams: [{name: tenant, value: acme}]
          limit: {requests: 1, unit: Hour}
`
	tr, err := migrate.Import("envoy-gateway", src, "eg.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := differsLines(tr, "query parameter tenant"); len(got) != 1 {
		t.Errorf("the query parameter selector is not reported as not imported: %q", got)
	}
	expectStatuses(t, serveImported(t, tr), []sent{
		{"/api/orders/1", "", "192.0.2.1", 200},
		{"/api/orders/2", "", "192.0.2.1", 429}, // paths-1: one an hour under /api/orders
		{"/api/public/a", "", "192.0.2.1", 200},
		{"/api/public/b", "", "192.0.2.1", 200}, // left out of paths-2
		{"/api/public/c", "", "192.0.2.1", 200},
		{"/api/other", "", "192.0.2.1", 200}, // paths-2's second (the refused request spent nothing)
		{"/api/more", "", "192.0.2.1", 429},
	})
}

// A local rule without clientSelectors is the route's default token bucket,
// which Envoy Gateway builds from its requests and unit alone
// (ir.RateLimitValue; the xDS LocalRateLimit has filter_enforced 100% and
// no shadow for it): its shadowMode is not applied, and the bucket refuses.
// The import enforces it too (under -enforce) and says why in the report.
func TestImportedEnvoyGatewayDefaultBucketIgnoresShadowMode(t *testing.T) {
	src := egAPIRoute + `apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: local}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: api}]
  rateLimit:
    type: Local
    local:
      rules:
        - limit: {requests: 1, unit: Hour}
          shadowMode: true
`
	tr, err := migrate.Import("envoy-gateway", src, "eg.yaml")
	if err != nil {
		t.Fatal(err)
	}
	expectStatuses(t, serveImported(t, tr), []sent{
		{"/api/x", "", "192.0.2.1", 200},
		{"/api/x", "", "192.0.2.1", 429},
	})
}

// Gateway API's PathPrefix matches path elements, and "a trailing / is
// ignored": /abc/ matches /abc, /abc/ and /abc/def alike (HTTPPathMatch's
// documentation). An HTTPRoute of PathPrefix /api/ takes /api, which its
// policy counts: the import writes the patterns of /api, /api and /api/,
// one count.
func TestImportedEnvoyGatewayPathPrefixIgnoresATrailingSlash(t *testing.T) {
	src := `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: api}
spec:
  rules:
    - matches:
        - path: {type: PathPrefix, value: /api/}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: hourly}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: api}]
  rateLimit:
    type: Global
    global:
      rules:
        - limit: {requests: 1, unit: Hour}
`
	tr, err := migrate.Import("envoy-gateway", src, "eg.yaml")
	if err != nil {
		t.Fatal(err)
	}
	expectStatuses(t, serveImported(t, tr), []sent{
		{"/api", "", "192.0.2.1", 200},
		{"/api/x", "", "192.0.2.1", 429}, // the route's one request an hour went to /api
	})
}
