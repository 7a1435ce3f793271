package migrate_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// A policy's targetRefs name resources of the policy's own namespace: of
// two HTTPRoutes named api (team-a's on /a, team-b's on /b), team-a's
// policy limits team-a's route alone, whatever order the documents of
// `kubectl get … -A -o yaml` come in.
func TestEnvoyGatewayPolicyTargetsTheRouteOfItsNamespace(t *testing.T) {
	src := `kind: HTTPRoute
metadata: {name: api, namespace: team-a}
spec:
  rules:
    - matches: [{path: {type: PathPrefix, value: /a}}]
---
kind: BackendTrafficPolicy
metadata: {name: limit, namespace: team-a}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: api}]
  rateLimit:
    global:
      rules:
        - limit: {requests: 1, unit: Hour}
---
kind: HTTPRoute
metadata: {name: api, namespace: team-b}
spec:
  rules:
    - matches: [{path: {type: PathPrefix, value: /b}}]
`
	tr, err := migrate.Import("envoy-gateway", src, "eg.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := serveImported(t, tr)
	got := statusesOf(h, []string{"GET", "/a"}, []string{"GET", "/a"}, []string{"GET", "/b"}, []string{"GET", "/b"})
	if want := []int{200, 429, 200, 200}; !slices.Equal(got, want) {
		t.Errorf("GET /a, /a, /b, /b: %v, want %v (team-a's policy limits team-a's route api, on /a)", got, want)
	}
}

// An HTTPRoute match on query parameters (queryParams: v=2) narrows the
// route to those requests; sluice's rules match no query parameter, so
// the rule counts every request to the route's paths, and the report
// must say the match is not imported.
func TestEnvoyGatewayRouteQueryParamsAreReported(t *testing.T) {
	src := `kind: HTTPRoute
metadata: {name: api}
spec:
  rules:
    - matches: [{path: {type: PathPrefix, value: /search}, queryParams: [{type: Exact, name: v, value: "2"}]}]
---
kind: BackendTrafficPolicy
metadata: {name: p}
spec:
  targetRefs: [{kind: HTTPRoute, name: api}]
  rateLimit:
    global:
      rules:
        - limit: {requests: 1, unit: Second}
`
	tr, err := migrate.Import("envoy-gateway", src, "eg.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !hasDifference(tr, false, "HTTPRoute api: its matches on methods, headers and query parameters are not imported") {
		t.Errorf("the HTTPRoute's queryParams match is dropped unreported:\n%s", strings.Join(differsLines(tr, ""), "\n"))
	}
}

// envoyproxy/ratelimit's Month and Year are 30 and 365 days from the Unix
// epoch; sluice's fixed windows of those spans start from 2020-01-01, 22
// and 12 days later. No sluice window starts at envoyproxy/ratelimit's
// boundaries, so the report must say the windows reset at other moments,
// by how many days, and not that they are counted from the Unix epoch.
func TestEnvoyGatewayMonthAndYearWindowsReportTheirOffset(t *testing.T) {
	for unit, days := range map[string]string{"Month": "22 days later", "Year": "12 days later"} {
		src := `kind: BackendTrafficPolicy
metadata: {name: p}
spec:
  targetRefs: [{kind: Gateway, name: eg}]
  rateLimit:
    global:
      rules:
        - limit: {requests: 1, unit: ` + unit + `}
`
		tr, err := migrate.Import("envoy-gateway", src, "eg.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if !hasDifference(tr, false, days+" than envoyproxy/ratelimit's boundaries") {
			t.Errorf("unit %s: the offset of sluice's windows from envoyproxy/ratelimit's is not reported:\n%s", unit, strings.Join(differsLines(tr, ""), "\n"))
		}
	}
}
