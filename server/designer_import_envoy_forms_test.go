package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// envoyLocalBootstrap is an Envoy bootstrap whose HTTP connection manager
// has a local_ratelimit filter: `sluice import -from envoy` reads it
// (migrate.EnvoyLocal).
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

// envoyRulesConfigMap is envoyproxy/ratelimit's rules in the ConfigMap a
// Kubernetes deployment mounts.
const envoyRulesConfigMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: ratelimit-config
data:
  config.yaml: |
    domain: rl
    descriptors:
      - key: PATH
        value: "/foo"
        rate_limit:
          unit: minute
          requests_per_unit: 1
`

// envoyRulesTwoDocuments is a rules file of two YAML documents, of which
// envoyproxy/ratelimit reads the first.
const envoyRulesTwoDocuments = `domain: rl
descriptors:
  - key: remote_address
    rate_limit: {unit: second, requests_per_unit: 10}
---
domain: other
descriptors:
  - key: remote_address
    rate_limit: {unit: minute, requests_per_unit: 5}
`

// POST /designer/import answers what `sluice import` writes: every Envoy
// file `sluice import -from envoy` translates (a local_ratelimit
// bootstrap, a ConfigMap holding the rules, a file of several documents)
// is a 200 with the format named or guessed, and the rules file it serves,
// when the translation has one, is the one `sluice import` writes.
func TestDesignerImportsEveryEnvoyFileSluiceImportReads(t *testing.T) {
	f := newFixture(t, testConfig)
	for name, src := range map[string]string{"local_ratelimit bootstrap": envoyLocalBootstrap,
		"ConfigMap": envoyRulesConfigMap, "two documents": envoyRulesTwoDocuments} {
		// What `sluice import -from envoy` does.
		tr, err := migrate.Import(migrate.FormatEnvoy, src, "envoy.yaml")
		if err != nil {
			t.Fatalf("%s: sluice import refuses it too: %v", name, err)
		}
		want, err := tr.Files(false)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, format := range []string{migrate.FormatEnvoy, ""} {
			body, _ := json.Marshal(map[string]any{"format": format, "source": src})
			r := f.do(t, "POST", "/designer/import", string(body), nil)
			text := readAll(t, r)
			if r.StatusCode != 200 {
				t.Errorf("%s, format %q: %d %s; sluice import -from envoy translates it", name, format, r.StatusCode, strings.TrimSpace(text))
				continue
			}
			var got struct {
				Files map[string]string `json:"files"`
			}
			if err := json.Unmarshal([]byte(text), &got); err != nil {
				t.Fatal(err)
			}
			if got.Files[migrate.EnvoyRulesFile] != want[migrate.EnvoyRulesFile] {
				t.Errorf("%s, format %q: serves the rules\n%s\nsluice import writes\n%s", name, format, got.Files[migrate.EnvoyRulesFile], want[migrate.EnvoyRulesFile])
			}
		}
	}
}
