package migrate_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// localBucket is a LocalRateLimit of n tokens a minute, enforced, for a
// typed_per_filter_config at indent.
func localBucket(indent, prefix string, n int) string {
	s := "envoy.filters.http.local_ratelimit:\n" +
		"  \"@type\": type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit\n" +
		"  stat_prefix: " + prefix + "\n" +
		"  token_bucket: {max_tokens: " + string(rune('0'+n)) + ", tokens_per_fill: " + string(rune('0'+n)) + ", fill_interval: 60s}\n" +
		"  filter_enabled: {default_value: {numerator: 100, denominator: HUNDRED}}\n" +
		"  filter_enforced: {default_value: {numerator: 100, denominator: HUNDRED}}\n"
	return indent + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+indent) + "\n"
}

// localChain is an Envoy bootstrap whose filter chain has a bucket of 3 a
// minute, and the virtual hosts vhosts (YAML of the list's items, at six
// spaces).
func localChain(vhosts string) string {
	return `static_resources:
  listeners:
  - name: main
    filter_chains:
    - filters:
      - name: envoy.filters.network.http_connection_manager
        typed_config:
          "@type": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
          stat_prefix: ingress_http
          route_config:
            virtual_hosts:
` + vhosts + `          http_filters:
          - name: envoy.filters.http.local_ratelimit
            typed_config:
` + localBucket("              ", "everything", 3) + `          - name: envoy.filters.http.router
`
}

// statusesOf sends each request (method, URL, then header name and value
// pairs) to h from one address and returns the statuses.
func statusesOf(h http.Handler, reqs ...[]string) []int {
	var out []int
	for _, q := range reqs {
		r := httptest.NewRequest(q[0], q[1], nil)
		r.RemoteAddr = "192.0.2.1:1234"
		for i := 2; i+1 < len(q); i += 2 {
			r.Header.Set(q[i], q[i+1])
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		out = append(out, w.Code)
	}
	return out
}

func times(n int, q ...string) [][]string {
	out := make([][]string, n)
	for i := range out {
		out[i] = q
	}
	return out
}

// differsLines returns the report's lines of differences that contain s.
func differsLines(tr *migrate.Translation, s string) []string {
	var out []string
	for _, d := range tr.Differences {
		if !d.Same && strings.Contains(d.Where+": "+d.Text, s) {
			out = append(out, d.Where+": "+d.Text)
		}
	}
	return out
}

// Routes before a route of its own bucket that take some of its requests
// by a header, a method or a narrower path (first match wins) are left out
// of its rule: Envoy gives their requests to them, never to the route's
// bucket. (The filter chain has the filter, without a bucket.)
func TestImportedEnvoyLocalLeavesOutEarlierRoutes(t *testing.T) {
	src := strings.Replace(localChain(`            - name: api
              domains: ["*"]
              routes:
              - name: beta
                match: {prefix: "/api/", headers: [{name: x-beta, present_match: true}]}
                route: {cluster: beta}
              - name: preflight
                match: {prefix: "/api/", headers: [{name: ":method", exact_match: OPTIONS}]}
                route: {cluster: app}
              - name: v2
                match: {prefix: "/api/v2/"}
                route: {cluster: v2}
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
	// X-Beta, OPTIONS and /api/v2/ are the earlier routes', unlimited.
	got := statusesOf(h, slices.Concat(times(3, "GET", "http://a.example/api/x", "X-Beta", "1"),
		times(3, "OPTIONS", "http://a.example/api/x"), times(3, "GET", "http://a.example/api/v2/x"))...)
	if want := []int{200, 200, 200, 200, 200, 200, 200, 200, 200}; !slices.Equal(got, want) {
		t.Errorf("X-Beta ×3, OPTIONS ×3, /api/v2/x ×3: %v, want %v (no bucket, not the route's 2)", got, want)
	}
	h = serveImported(t, tr)
	got = statusesOf(h, times(3, "GET", "http://a.example/api/x")...)
	if want := []int{200, 200, 429}; !slices.Equal(got, want) {
		t.Errorf("/api/x ×3: %v, want %v (the route's 2)", got, want)
	}
	if lines := differsLines(tr, "earlier route"); len(lines) > 0 {
		t.Errorf("reported: %q", lines)
	}
}

// A virtual host with a bucket of its own replaces the filter chain's
// there: the chain's rule leaves its hosts out.
func TestImportedEnvoyLocalLeavesOutAVirtualHostOfItsOwn(t *testing.T) {
	src := localChain(`            - name: internal
              domains: [internal.example, Ops.Example]
              routes: [{match: {prefix: "/"}, route: {cluster: ops}}]
              typed_per_filter_config:
` + localBucket("                ", "internal", 5) + `            - name: api
              domains: ["*"]
              routes: [{match: {prefix: "/"}, route: {cluster: app}}]
`)
	tr, err := migrate.Import("envoy", src, "envoy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got := statusesOf(serveImported(t, tr), slices.Concat(times(5, "GET", "http://internal.example/x"),
		times(1, "GET", "http://ops.example/x"), times(4, "GET", "http://a.example/x"))...)
	if want := []int{200, 200, 200, 200, 200, 429, 200, 200, 200, 429}; !slices.Equal(got, want) {
		t.Errorf("internal.example ×5, ops.example, a.example ×4: %v, want %v (the host's 5, the chain's 3)", got, want)
	}
	if lines := differsLines(tr, "has a bucket of its own"); len(lines) > 0 {
		t.Errorf("reported: %q", lines)
	}
}

// A route of another virtual host with a bucket of its own replaces the
// filter chain's there, on that host only: the chain's rule leaves out its
// path and headers on the virtual host's domains.
func TestImportedEnvoyLocalLeavesOutARouteOnItsHost(t *testing.T) {
	src := localChain(`            - name: shop
              domains: [shop.example]
              routes:
              - name: cart
                match: {prefix: "/cart/"}
                route: {cluster: shop}
                typed_per_filter_config:
` + localBucket("                  ", "cart", 5) + `              - name: beta
                match: {prefix: "/beta/", headers: [{name: x-beta, exact_match: "1"}]}
                route: {cluster: shop}
                typed_per_filter_config:
` + localBucket("                  ", "beta", 5) + `              - match: {prefix: "/"}
                route: {cluster: shop}
            - name: api
              domains: ["*"]
              routes: [{match: {prefix: "/"}, route: {cluster: app}}]
`)
	tr, err := migrate.Import("envoy", src, "envoy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// shop.example/cart/ and /beta/ with X-Beta: 1 are their routes'; the
	// same paths of other hosts, and /beta/ without it, the chain's.
	got := statusesOf(serveImported(t, tr), slices.Concat(times(4, "GET", "http://shop.example/cart/x"),
		times(4, "GET", "http://shop.example/beta/x", "X-Beta", "1"),
		times(2, "GET", "http://a.example/cart/x"), times(2, "GET", "http://shop.example/beta/x"))...)
	if want := []int{200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 429}; !slices.Equal(got, want) {
		t.Errorf("shop/cart ×4, shop/beta with X-Beta ×4, a/cart ×2, shop/beta ×2: %v, want %v", got, want)
	}
	if rep := tr.Report(); !strings.Contains(rep, "every path except /cart/ of shop.example or /beta/ of shop.example with X-Beta") {
		t.Errorf("the report does not tell what the rule leaves out:\n%s", rep)
	}
	for _, s := range []string{"not only on", "sluice cannot leave its requests out"} {
		if lines := differsLines(tr, s); len(lines) > 0 {
			t.Errorf("reported: %q", lines)
		}
	}
}

// Envoy gives a request to the virtual host of its host's domain, and to
// the "*" one only when no other's domain is its host: the rule of a
// bucket of the "*" virtual host leaves out the other virtual hosts'
// domains, and the filter chain's rule counts only theirs when the "*"
// one has a bucket of its own.
func TestImportedEnvoyLocalWildcardVirtualHostLeavesTheOthersHostsOut(t *testing.T) {
	src := localChain(`            - name: shop
              domains: [shop.example, Www.Shop.Example]
              routes: [{match: {prefix: "/"}, route: {cluster: shop}}]
            - name: api
              domains: ["*"]
              routes: [{match: {prefix: "/"}, route: {cluster: app}}]
              typed_per_filter_config:
` + localBucket("                ", "api", 2))
	tr, err := migrate.Import("envoy", src, "envoy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// shop.example and www.shop.example are shop's, under the chain's 3;
	// every other host is api's, under its 2.
	got := statusesOf(serveImported(t, tr), slices.Concat(times(3, "GET", "http://shop.example/x"),
		times(1, "GET", "http://www.shop.example/x"), times(3, "GET", "http://a.example/x"), times(1, "GET", "http://b.example/x"))...)
	if want := []int{200, 200, 200, 429, 200, 200, 429, 429}; !slices.Equal(got, want) {
		t.Errorf("shop.example ×3, www.shop.example, a.example ×3, b.example: %v, want %v (the chain's 3, api's 2)", got, want)
	}
	if lines := differsLines(tr, "bucket of its own"); len(lines) > 0 {
		t.Errorf("reported: %q", lines)
	}
}

// A route of the "*" virtual host with a bucket of its own takes its
// paths on the hosts no other virtual host has: its rule leaves the
// others' domains out, and the filter chain's rule, which can leave its
// paths out only on every host, says that it does so on theirs too.
func TestImportedEnvoyLocalWildcardRouteLeavesTheOthersHostsOut(t *testing.T) {
	src := localChain(`            - name: shop
              domains: [shop.example]
              routes: [{match: {prefix: "/"}, route: {cluster: shop}}]
            - name: api
              domains: ["*"]
              routes:
              - name: login
                match: {prefix: "/login/"}
                route: {cluster: app}
                typed_per_filter_config:
` + localBucket("                  ", "login", 2) + `              - match: {prefix: "/"}
                route: {cluster: app}
`)
	tr, err := migrate.Import("envoy", src, "envoy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// a.example/login/ is the route's 2; shop.example/login/ is shop's,
	// which the route's rule does not count.
	got := statusesOf(serveImported(t, tr), slices.Concat(times(3, "GET", "http://a.example/login/x"),
		times(3, "GET", "http://shop.example/login/x"))...)
	if want := []int{200, 200, 429}; !slices.Equal(got[:3], want) {
		t.Errorf("a.example/login/ ×3: %v, want %v (the route's 2)", got[:3], want)
	}
	if got[5] != 200 {
		t.Errorf("shop.example/login/ ×3: %v, want no 429 of the route's 2", got[3:])
	}
	if lines := differsLines(tr, "also on shop.example"); len(lines) != 1 {
		t.Errorf("the chain's rule leaves /login/ out on shop.example without saying so once: %q\n%s", lines, tr.Report())
	}
}

// A virtual host of a wildcard domain takes its hosts before the "*" one,
// which sluice's hosts cannot say: the "*" virtual host's rule counts them
// too, and says so.
func TestImportedEnvoyLocalWildcardVirtualHostReportsWhatItCannotLeaveOut(t *testing.T) {
	src := localChain(`            - name: shop
              domains: ["*.shop.example"]
              routes: [{match: {prefix: "/"}, route: {cluster: shop}}]
            - name: api
              domains: ["*"]
              routes: [{match: {prefix: "/"}, route: {cluster: app}}]
              typed_per_filter_config:
` + localBucket("                ", "api", 2))
	tr, err := migrate.Import("envoy", src, "envoy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"virtual host shop takes its domains (*.shop.example)", "sluice counts its requests in both"} {
		if lines := differsLines(tr, s); len(lines) != 1 {
			t.Errorf("%q said %d times, want once:\n%s", s, len(lines), tr.Report())
		}
	}
}
