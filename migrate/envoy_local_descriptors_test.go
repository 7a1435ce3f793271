package migrate_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// localTenantRoute is a route configuration whose one route ("/") has a
// local rate limit of a large default bucket and a descriptor of one entry,
// tenant, with a bucket of 1 an hour; vhostLimits and routeLimits are the
// rate_limits of the virtual host and of the route (YAML at their indent,
// "" for none).
func localTenantRoute(vhostLimits, routeLimits string) string {
	src := `route_config:
  virtual_hosts:
  - name: api
    domains: ["*"]
`
	if vhostLimits != "" {
		src += "    rate_limits:\n" + vhostLimits
	}
	src += `    routes:
    - match: {prefix: "/"}
      route:
        cluster: app
`
	if routeLimits != "" {
		src += "        rate_limits:\n" + routeLimits
	}
	src += `      typed_per_filter_config:
        envoy.filters.http.local_ratelimit:
          "@type": type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit
          stat_prefix: api
          token_bucket: {max_tokens: 100, tokens_per_fill: 100, fill_interval: 60s}
          filter_enabled: {default_value: {numerator: 100, denominator: HUNDRED}}
          filter_enforced: {default_value: {numerator: 100, denominator: HUNDRED}}
          descriptors:
          - entries: [{key: tenant}]
            token_bucket: {max_tokens: 1, tokens_per_fill: 1, fill_interval: 3600s}
`
	return src
}

// expectTenantUncounted imports src and sends two requests of tenant acme
// from two addresses: Envoy never makes the descriptor [tenant] from the
// route's rate_limits in each case below, so only the default bucket of 100
// counts them and both pass.
func expectTenantUncounted(t *testing.T, src string) {
	t.Helper()
	tr, err := migrate.Import("envoy", src, "envoy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	expectStatuses(t, serveImported(t, tr), []sent{
		{"/a", "acme", "192.0.2.1", 200},
		{"/a", "acme", "192.0.2.2", 200},
	})
}

// Envoy matches a local descriptor against the whole descriptor one
// rate_limits entry makes (every entry of its actions, in order: the
// LocalDescriptor's equality): a rate limit of the actions tenant and
// remote_address makes [tenant=acme, remote_address=…], which is not the
// configured [tenant]. The import imports a descriptor only when a rate
// limit's actions make exactly its keys, in order, and reports this one as
// never matched.
func TestImportedEnvoyLocalDescriptorIsTheWholeRateLimit(t *testing.T) {
	expectTenantUncounted(t, localTenantRoute("", `        - actions:
          - request_headers: {header_name: x-tenant, descriptor_key: tenant}
          - remote_address: {}
`))
}

// The local rate limit filter reads only the rate limits of its stage
// (getApplicableRateLimit(config->stage()), 0 by default): one of stage 1
// makes no descriptor for it, and the import does not read it either.
func TestImportedEnvoyLocalRateLimitOfAnotherStageIsNotRead(t *testing.T) {
	expectTenantUncounted(t, localTenantRoute("", `        - stage: 1
          actions:
          - request_headers: {header_name: x-tenant, descriptor_key: tenant}
`))
}

// vh_rate_limits defaults to OVERRIDE: the virtual host's rate limits make
// descriptors only for a route without rate limits of its own. Here the
// route has one (a generic key), so the virtual host's tenant action is not
// read, by Envoy or by the import.
func TestImportedEnvoyLocalRouteRateLimitsOverrideTheVirtualHosts(t *testing.T) {
	expectTenantUncounted(t, localTenantRoute(`    - actions:
      - request_headers: {header_name: x-tenant, descriptor_key: tenant}
`, `        - actions:
          - generic_key: {descriptor_value: api}
`))
}

// A descriptor entry with a value on the :path header matches the request
// whose :path is that very value (Envoy compares the descriptor entries'
// values as strings). The import writes the pattern of that path alone
// (/api/{$}), so /api/a and /api/b, which Envoy never counts in that
// bucket, do not share its one token; the report says that Envoy's :path
// holds the query string, which sluice's pattern does not compare.
func TestImportedEnvoyLocalPathValueIsThatPathAlone(t *testing.T) {
	src := `route_config:
  virtual_hosts:
  - name: api
    domains: ["*"]
    routes:
    - match: {prefix: "/"}
      route:
        cluster: app
        rate_limits:
        - actions:
          - request_headers: {header_name: ":path", descriptor_key: path}
      typed_per_filter_config:
        envoy.filters.http.local_ratelimit:
          "@type": type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit
          stat_prefix: api
          token_bucket: {max_tokens: 100, tokens_per_fill: 100, fill_interval: 60s}
          filter_enabled: {default_value: {numerator: 100, denominator: HUNDRED}}
          filter_enforced: {default_value: {numerator: 100, denominator: HUNDRED}}
          descriptors:
          - entries: [{key: path, value: "/api/"}]
            token_bucket: {max_tokens: 1, tokens_per_fill: 1, fill_interval: 3600s}
`
	tr, err := migrate.Import("envoy", src, "envoy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	expectStatuses(t, serveImported(t, tr), []sent{
		{"/api/a", "", "192.0.2.1", 200},
		{"/api/b", "", "192.0.2.1", 200}, // not :path "/api/": only the default bucket
		{"/api/", "", "192.0.2.1", 200},
		{"/api/", "", "192.0.2.1", 429}, // the descriptor's one token an hour
	})
	if got := differsLines(tr, "query string included"); len(got) != 1 {
		t.Errorf("the report does not say Envoy's :path holds the query string: %q", got)
	}
}

// vh_rate_limits: INCLUDE reads the virtual host's rate limits beside the
// route's: the tenant action of the virtual host makes the descriptor
// [tenant], and tenant acme's second request within the hour is refused.
func TestImportedEnvoyLocalVirtualHostRateLimitsIncluded(t *testing.T) {
	src := strings.Replace(localTenantRoute(`    - actions:
      - request_headers: {header_name: x-tenant, descriptor_key: tenant}
`, `        - actions:
          - generic_key: {descriptor_value: api}
`), "          stat_prefix: api\n", "          stat_prefix: api\n          vh_rate_limits: INCLUDE\n", 1)
	tr, err := migrate.Import("envoy", src, "envoy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	expectStatuses(t, serveImported(t, tr), []sent{
		{"/a", "acme", "192.0.2.1", 200},
		{"/a", "acme", "192.0.2.2", 429},
		{"/a", "umbrella", "192.0.2.2", 200},
	})
}
