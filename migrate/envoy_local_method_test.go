package migrate_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// A route that matches by :method exactly has its bucket imported as a
// rule of that method: POSTs to /api/ are limited at its 2, GETs are not
// its route's. A GET route leaves HEAD out, which Envoy's exact :method
// GET does not match.
func TestImportedEnvoyLocalRouteOfAMethod(t *testing.T) {
	src := strings.Replace(localChain(`            - name: api
              domains: ["*"]
              routes:
              - name: writes
                match: {prefix: "/api/", headers: [{name: ":method", exact_match: POST}]}
                route: {cluster: app}
                typed_per_filter_config:
`+localBucket("                  ", "writes", 2)+`              - name: reads
                match: {prefix: "/reads/", headers: [{name: ":method", string_match: {exact: GET}}]}
                route: {cluster: app}
                typed_per_filter_config:
`+localBucket("                  ", "reads", 1)+`              - name: rest
                match: {prefix: "/"}
                route: {cluster: app}
`), "\n                token_bucket: {max_tokens: 3, tokens_per_fill: 3, fill_interval: 60s}", "", 1)
	tr, err := migrate.Import("envoy", src, "envoy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got := statusesOf(serveImported(t, tr), slices.Concat(times(3, "POST", "http://a.example/api/x"),
		times(3, "GET", "http://a.example/api/x"), times(2, "GET", "http://a.example/reads/x"),
		times(2, "HEAD", "http://a.example/reads/x"))...)
	want := []int{200, 200, 429, 200, 200, 200, 200, 429, 200, 200}
	if !slices.Equal(got, want) {
		t.Errorf("POST /api/x ×3, GET /api/x ×3, GET /reads/x ×2, HEAD /reads/x ×2: %v, want %v", got, want)
	}
	if lines := differsLines(tr, "not imported"); len(lines) > 0 {
		t.Errorf("reported: %q", lines)
	}
}

// A route's inverted header matcher (invert_match) takes the requests
// without that header or value: the rule leaves out those with it.
func TestImportedEnvoyLocalRouteOfAnInvertedHeader(t *testing.T) {
	src := strings.Replace(localChain(`            - name: api
              domains: ["*"]
              routes:
              - name: public
                match: {prefix: "/api/", headers: [{name: x-internal, exact_match: "yes", invert_match: true}]}
                route: {cluster: app}
                typed_per_filter_config:
`+localBucket("                  ", "public", 2)+`              - name: rest
                match: {prefix: "/"}
                route: {cluster: app}
`), "\n                token_bucket: {max_tokens: 3, tokens_per_fill: 3, fill_interval: 60s}", "", 1)
	tr, err := migrate.Import("envoy", src, "envoy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got := statusesOf(serveImported(t, tr), slices.Concat(times(3, "GET", "http://a.example/api/x", "X-Internal", "yes"),
		times(3, "GET", "http://a.example/api/x"), times(1, "GET", "http://a.example/api/x", "X-Internal", "no"))...)
	if want := []int{200, 200, 200, 200, 200, 429, 429}; !slices.Equal(got, want) {
		t.Errorf("/api/x with X-Internal: yes ×3, without ×3, with X-Internal: no: %v, want %v", got, want)
	}
}
