package migrate_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// envoyLocalBootstrap is an Envoy bootstrap with a local rate limit in the
// filter chain (a bucket for every request), and routes with buckets of
// their own: /login for everyone together, /v1/ with a bucket per X-Tenant
// value and one for tenant acme.
const envoyLocalBootstrap = `static_resources:
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
            - name: api
              domains: ["*"]
              routes:
              - name: login
                match: {path: "/login"}
                route: {cluster: app}
                typed_per_filter_config:
                  envoy.filters.http.local_ratelimit:
                    "@type": type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit
                    stat_prefix: login
                    token_bucket: {max_tokens: 2, tokens_per_fill: 1, fill_interval: 60s}
                    filter_enabled: {default_value: {numerator: 100, denominator: HUNDRED}}
                    filter_enforced: {default_value: {numerator: 100, denominator: HUNDRED}}
                    status: {code: ServiceUnavailable}
              - name: tenants
                match: {prefix: "/v1/"}
                route:
                  cluster: app
                  rate_limits:
                  - actions:
                    - request_headers: {header_name: x-tenant, descriptor_key: tenant}
                typed_per_filter_config:
                  envoy.filters.http.local_ratelimit:
                    "@type": type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit
                    stat_prefix: tenants
                    token_bucket: {max_tokens: 4, tokens_per_fill: 4, fill_interval: 60s}
                    filter_enabled: {default_value: {numerator: 100, denominator: HUNDRED}}
                    filter_enforced: {default_value: {numerator: 100, denominator: HUNDRED}}
                    descriptors:
                    - entries: [{key: tenant}]
                      token_bucket: {max_tokens: 1, tokens_per_fill: 1, fill_interval: 60s}
              - match: {safe_regex: {regex: "/re.*"}}
                route: {cluster: app}
                typed_per_filter_config:
                  envoy.filters.http.local_ratelimit:
                    "@type": type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit
                    stat_prefix: regex
                    token_bucket: {max_tokens: 1, fill_interval: 1s}
                    filter_enabled: {default_value: {numerator: 100}}
              - match: {prefix: "/"}
                route: {cluster: app}
          http_filters:
          - name: envoy.filters.http.local_ratelimit
            typed_config:
              "@type": type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit
              stat_prefix: everything
              token_bucket: {max_tokens: 3, tokens_per_fill: 3, fill_interval: 60s}
              filter_enabled: {default_value: {numerator: 100, denominator: HUNDRED}}
              filter_enforced: {default_value: {numerator: 100, denominator: HUNDRED}}
          - name: envoy.filters.http.router
`

func TestImportEnvoyLocal(t *testing.T) {
	runImportCases(t, []importCase{
		{
			name:   "a filter chain's bucket and routes with their own, a bucket per header value",
			format: "envoy",
			src:    envoyLocalBootstrap,
			limits: []string{"placeholder: fixed-window 1000000000 per 1s (shadow)"},
			rules: []string{
				"login paths=[/login] key=[rule] | per-process: token-bucket 1 per 1m0s burst 2",
				"tenants paths=[/v1/] key=[rule] | per-process: token-bucket 4 per 1m0s burst 4",
				"tenants-1 paths=[/v1/] key=[header:X-Tenant] header_from=any fallback=skip | per-descriptor: token-bucket 1 per 1m0s burst 1",
				"local paths=[] except=[/login /v1/] key=[rule] | per-process: token-bucket 3 per 1m0s burst 3",
			},
			same: []string{"holds 2 tokens, starts full and refills 1 every 1m: sluice's token-bucket of 1 per 1m with burst 2",
				"one token bucket for every request it applies to", "gives each value its own bucket (key header:X-Tenant)"},
			differs: []string{"route login (line 20) status: Envoy answered ServiceUnavailable",
				"route route-3 (line 47): not imported: the route matches by a regular expression",
				"route route-3 has a bucket of its own", "instances: each Envoy process keeps its own buckets"},
		},
		{
			name:   "an Istio EnvoyFilter, in shadow; a vhost's bucket per masked address; what is not imported",
			format: "envoy",
			src: `apiVersion: networking.istio.io/v1alpha3
kind: EnvoyFilter
metadata: {name: filter-local-ratelimit-svc}
spec:
  configPatches:
    - applyTo: HTTP_FILTER
      patch:
        operation: INSERT_BEFORE
        value:
          name: envoy.filters.http.local_ratelimit
          typed_config:
            "@type": type.googleapis.com/udpa.type.v1.TypedStruct
            type_url: type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit
            value:
              stat_prefix: http_local_rate_limiter
---
route_config:
  virtual_hosts:
  - name: shop
    domains: ["shop.example.com", "www.shop.example.com"]
    rate_limits:
    - actions: [{masked_remote_address: {v4_prefix_mask_len: 24, v6_prefix_mask_len: 56}}]
    typed_per_filter_config:
      envoy.filters.http.local_ratelimit:
        "@type": type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit
        stat_prefix: shop
        token_bucket: {max_tokens: 50, tokens_per_fill: {value: 10}, fill_interval: 0.5s}
        filter_enabled: {default_value: {numerator: 100, denominator: HUNDRED}}
        local_rate_limit_per_downstream_connection: true
        descriptors:
        - entries: [{key: masked_remote_address}]
          token_bucket: {max_tokens: 5, fill_interval: 1s}
        - entries: [{key: user}]
          token_bucket: {max_tokens: 5, fill_interval: 1s}
    routes:
    - match: {prefix: "/"}
      route: {cluster: shop}
  - name: off
    domains: ["*"]
    typed_per_filter_config:
      envoy.filters.http.local_ratelimit:
        "@type": type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit
        stat_prefix: off
        token_bucket: {max_tokens: 1, fill_interval: 1s}
`,
			limits: []string{"placeholder: fixed-window 1000000000 per 1s (shadow)"},
			rules: []string{
				"shop paths=[] hosts=[shop.example.com www.shop.example.com] key=[rule] | per-process: token-bucket 10 per 500ms burst 50 (shadow)",
				"shop-1 paths=[] hosts=[shop.example.com www.shop.example.com] key=[ip/24/56] | per-descriptor: token-bucket 1 per 1s burst 5 (shadow)",
			},
			same:    []string{"filter_enforced is 0%: Envoy only counts what it would refuse; imported in shadow mode"},
			differs: []string{"local_rate_limit_per_downstream_connection", "descriptor 2: not imported: no rate_limits entry", "local_ratelimit off on virtual host off"},
		},
	})
}

// TestImportedEnvoyLocalDecides serves the import of envoyLocalBootstrap
// and checks its buckets: /login's 2 for everyone, /v1/'s 1 per tenant
// within 4 for the route, and the filter chain's 3 for every other path.
func TestImportedEnvoyLocalDecides(t *testing.T) {
	tr, err := migrate.Import("envoy", envoyLocalBootstrap, "envoy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	expectStatuses(t, serveImported(t, tr), []sent{
		{"/login", "", "192.0.2.1", 200},
		{"/login", "", "192.0.2.2", 200},
		{"/login", "", "192.0.2.3", 429}, // one bucket for every client
		{"/v1/a", "t1", "192.0.2.1", 200},
		{"/v1/a", "t1", "192.0.2.2", 429}, // t1's bucket of 1
		{"/v1/a", "t2", "192.0.2.1", 200},
		{"/v1/b", "", "192.0.2.1", 200}, // no tenant: the route's bucket only
		{"/v1/b", "", "192.0.2.1", 200}, // the route's fourth token (t1's refused request spent none)
		{"/v1/b", "", "192.0.2.1", 429},
		{"/other", "", "192.0.2.1", 200},
		{"/login/x", "", "192.0.2.1", 200},
		{"/x", "", "192.0.2.4", 200},
		{"/y", "", "192.0.2.5", 429}, // the chain's 3, whoever asks
	})
}

// envoyLocalFilter is a filter chain's local rate limit of bucket, with
// descriptors (YAML of the descriptors list, "" for none) on a route of
// the header x-tenant.
func envoyLocalFilter(bucket, descriptors string) string {
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
          - request_headers: {header_name: x-tenant, descriptor_key: tenant}
      typed_per_filter_config:
        envoy.filters.http.local_ratelimit:
          "@type": type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit
          stat_prefix: api
          token_bucket: ` + bucket + `
          filter_enabled: {default_value: {numerator: 100, denominator: HUNDRED}}
          filter_enforced: {default_value: {numerator: 100, denominator: HUNDRED}}
`
	if descriptors != "" {
		src += "          descriptors:\n" + descriptors
	}
	return src
}

// TestImportEnvoyLocalFillInterval holds the import to Envoy's rule for a
// token bucket's fill_interval: Envoy refuses a configuration whose default
// bucket or descriptor bucket (of max_tokens above 0) fills more often than
// every 50ms ("local rate limit token bucket fill timer must be >= 50ms"),
// even where filter_enabled is 0; 50ms itself is accepted.
func TestImportEnvoyLocalFillInterval(t *testing.T) {
	refused := map[string]string{
		"a default bucket of 49ms": envoyLocalFilter("{max_tokens: 1, fill_interval: 0.049s}", ""),
		"a default bucket of 10ms, the filter disabled": strings.Replace(envoyLocalFilter("{max_tokens: 1, fill_interval: 0.01s}", ""),
			"numerator: 100, denominator: HUNDRED}}\n          filter_enforced", "numerator: 0, denominator: HUNDRED}}\n          filter_enforced", 1),
		"a descriptor bucket of 1ms": envoyLocalFilter("{max_tokens: 10, fill_interval: 1s}",
			"          - entries: [{key: tenant}]\n            token_bucket: {max_tokens: 1, fill_interval: 0.001s}\n"),
	}
	for name, src := range refused {
		t.Run(name, func(t *testing.T) {
			if tr, err := migrate.Import("envoy", src, "envoy.yaml"); err == nil {
				t.Fatalf("imported, with rules %v", tr.SluiceRules)
			} else if !strings.Contains(err.Error(), "50ms") {
				t.Errorf("error %q does not say Envoy's bound, 50ms", err)
			}
		})
	}
	t.Run("a bucket of 50ms is imported and decides", func(t *testing.T) {
		tr, err := migrate.Import("envoy", envoyLocalFilter("{max_tokens: 1, tokens_per_fill: 1, fill_interval: 0.05s}",
			"          - entries: [{key: tenant}]\n            token_bucket: {max_tokens: 1, fill_interval: 3600s}\n"), "envoy.yaml")
		if err != nil {
			t.Fatal(err)
		}
		expectStatuses(t, serveImported(t, tr), []sent{
			{"/a", "t1", "192.0.2.1", 200},
			{"/a", "t1", "192.0.2.2", 429}, // t1's one token per hour
		})
	})
}
