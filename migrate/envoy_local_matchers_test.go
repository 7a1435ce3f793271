package migrate_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// A route takes a request only when its whole match holds: a canary route
// {prefix: /api/v2/, runtime_fraction: 1%} before route api takes 1% of
// /api/v2/ requests and leaves the rest to route api's bucket. The import
// cannot leave a fraction out, so it must not leave out all of /api/v2/
// (which Envoy limits 99 times in 100) as if the canary were a route of
// paths alone: route api's rule counts /api/v2/ too, and the report says
// the earlier route takes some of them.
func TestEnvoyLocalEarlierRouteOfAFractionIsNotLeftOutWhole(t *testing.T) {
	src := strings.Replace(localChain(`            - name: api
              domains: ["*"]
              routes:
              - name: canary
                match: {prefix: "/api/v2/", runtime_fraction: {default_value: {numerator: 1, denominator: HUNDRED}, runtime_key: canary}}
                route: {cluster: canary}
              - name: api
                match: {prefix: "/api/"}
                route: {cluster: app}
                typed_per_filter_config:
`+localBucket("                  ", "api", 2)), "\n                token_bucket: {max_tokens: 3, tokens_per_fill: 3, fill_interval: 60s}", "", 1)
	tr, err := migrate.Import("envoy", src, "envoy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := serveImported(t, tr)
	got := statusesOf(h, times(3, "GET", "http://a.example/api/v2/x")...)
	if want := []int{200, 200, 429}; !slices.Equal(got, want) {
		t.Errorf("/api/v2/x ×3: %v, want %v (route api's bucket of 2 counts them: Envoy gives it 99%% of them)", got, want)
	}
	if len(differsLines(tr, "earlier route")) == 0 {
		t.Errorf("the canary route taking some of route api's requests is not reported")
	}
}

// A route matching by something sluice's rules cannot say (grpc: gRPC
// requests alone) is not imported, and reported: its bucket would
// otherwise count every request to its paths, browsers' too.
func TestEnvoyLocalRouteOfAGRPCMatcherIsNotImported(t *testing.T) {
	src := strings.Replace(localChain(`            - name: api
              domains: ["*"]
              routes:
              - name: grpc
                match: {prefix: "/", grpc: {}}
                route: {cluster: grpc}
                typed_per_filter_config:
`+localBucket("                  ", "grpc", 2)+`              - name: web
                match: {prefix: "/web/"}
                route: {cluster: web}
                typed_per_filter_config:
`+localBucket("                  ", "web", 2)), "\n                token_bucket: {max_tokens: 3, tokens_per_fill: 3, fill_interval: 60s}", "", 1)
	tr, err := migrate.Import("envoy", src, "envoy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := serveImported(t, tr)
	if got := statusesOf(h, times(3, "GET", "http://a.example/index.html")...); slices.Contains(got, 429) {
		t.Errorf("GET /index.html ×3 (not gRPC): %v, want all 200 (Envoy's grpc route does not take them)", got)
	}
	if len(differsLines(tr, "the route also matches by grpc")) == 0 {
		t.Errorf("the grpc route is not reported as not imported")
	}
}

// When every bucket is on such routes, the import is refused with the
// reason, not a bare "nothing to import".
func TestEnvoyLocalNothingImportableSaysWhy(t *testing.T) {
	src := strings.Replace(localChain(`            - name: api
              domains: ["*"]
              routes:
              - name: grpc
                match: {prefix: "/", grpc: {}}
                route: {cluster: grpc}
                typed_per_filter_config:
`+localBucket("                  ", "grpc", 2)), "\n                token_bucket: {max_tokens: 3, tokens_per_fill: 3, fill_interval: 60s}", "", 1)
	_, err := migrate.Import("envoy", src, "envoy.yaml")
	if err == nil || !strings.Contains(err.Error(), "grpc") {
		t.Errorf("import of a grpc route's bucket alone: error %v, want one naming the grpc matcher", err)
	}
}
