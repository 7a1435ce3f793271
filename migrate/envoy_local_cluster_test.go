package migrate_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// localClusterRoutes is a route configuration of two routes, /a and /b,
// each with a local rate limit of 100 a minute; those whose names are in
// shared set local_cluster_rate_limit.
func localClusterRoutes(shared ...string) string {
	src := `route_config:
  virtual_hosts:
  - name: api
    domains: ["*"]
    routes:
`
	for _, name := range []string{"a", "b"} {
		src += `    - name: ` + name + `
      match: {prefix: "/` + name + `"}
      route: {cluster: app}
      typed_per_filter_config:
        envoy.filters.http.local_ratelimit:
          "@type": type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit
          stat_prefix: ` + name + `
          token_bucket: {max_tokens: 100, tokens_per_fill: 100, fill_interval: 60s}
          filter_enabled: {default_value: {numerator: 100, denominator: HUNDRED}}
          filter_enforced: {default_value: {numerator: 100, denominator: HUNDRED}}
`
		for _, s := range shared {
			if s == name {
				src += "          local_cluster_rate_limit: {}\n"
			}
		}
	}
	return src
}

// TestImportEnvoyLocalClusterRateLimitIsOneSharedCount: with
// local_cluster_rate_limit (Envoy 1.31) each Envoy of the local cluster
// holds a share of the bucket, so the cluster admits the limit once, not
// once per Envoy. The import writes the Redis store (instances,
// on_store_error: local), one count for every sluice instance, and does not
// advise one sluice on its memory store beside each Envoy; a configuration
// of the same file without it, each Envoy's own bucket, is reported as
// needing N times its limit there. A file where no configuration sets it
// keeps the memory store and says N Envoys admit N times a limit.
func TestImportEnvoyLocalClusterRateLimitIsOneSharedCount(t *testing.T) {
	for _, c := range []struct {
		name                string
		shared              []string
		redis, nTimes, rest bool
	}{
		{"every configuration shares", []string{"a", "b"}, true, false, false},
		{"one configuration shares", []string{"a"}, true, false, true},
		{"none shares", nil, false, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr, err := migrate.Import("envoy", localClusterRoutes(c.shared...), "envoy.yaml")
			if err != nil {
				t.Fatal(err)
			}
			files, err := tr.Files(true)
			if err != nil {
				t.Fatal(err)
			}
			cfg := files[migrate.ConfigFile]
			redis := strings.Contains(cfg, "type: redis") && strings.Contains(cfg, "instances:") && strings.Contains(cfg, "on_store_error: local")
			if redis != c.redis {
				t.Errorf("Redis store with instances and on_store_error: local written: %v, want %v:\n%s", redis, c.redis, cfg)
			}
			var nTimes, shared, rest bool
			for _, d := range tr.Differences {
				if d.Where != "instances" {
					continue
				}
				nTimes = nTimes || strings.Contains(d.Text, "N Envoy instances admit N times a limit. One sluice beside each Envoy on its memory store keeps that")
				shared = shared || strings.Contains(d.Text, "local_cluster_rate_limit (local_ratelimit a on route a")
				rest = rest || strings.Contains(d.Text, "without local_cluster_rate_limit (local_ratelimit b on route b")
			}
			if nTimes != c.nTimes || shared != c.redis || rest != c.rest {
				t.Errorf("instances reported: N times %v (want %v), shared count %v (want %v), the configuration without it %v (want %v): %+v", nTimes, c.nTimes, shared, c.redis, rest, c.rest, tr.Differences)
			}
		})
	}
}

// TestImportEnvoyDynamicDescriptorsCacheIsReported: Envoy keeps the buckets
// of at most max_dynamic_descriptors values (20 when unset) of a
// descriptor with an entry without a value, evicting the least recently
// used, and a value seen again after its eviction starts with a full
// bucket; sluice keeps every value's bucket. The report says so, with the
// configured number.
func TestImportEnvoyDynamicDescriptorsCacheIsReported(t *testing.T) {
	dynamic := localTenantRoute("", `        - actions:
          - request_headers: {header_name: x-tenant, descriptor_key: tenant}
`)
	for _, c := range []struct {
		name, src, want string
	}{
		{"unset", dynamic, "at most 20 values of this descriptor (max_dynamic_descriptors, 20 when unset)"},
		{"set", strings.Replace(dynamic, "          descriptors:\n", "          max_dynamic_descriptors: 500\n          descriptors:\n", 1), "at most 500 values of this descriptor (max_dynamic_descriptors, as set)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr, err := migrate.Import("envoy", c.src, "envoy.yaml")
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range tr.Differences {
				if strings.HasSuffix(d.Where, "descriptor 1 max_dynamic_descriptors") && !d.Same && strings.Contains(d.Text, c.want) {
					return
				}
			}
			t.Errorf("no difference says %q: %+v", c.want, tr.Differences)
		})
	}
}
