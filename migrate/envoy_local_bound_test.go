package migrate_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/migrate"
)

// Local rate limit configurations whose descriptors, all together, are
// more than MaxPlaces are refused saying the bound before any is
// translated: each descriptor is a rule, and one configuration of 20,000
// took the import 3.7 s of a core before Files refused it (the process's
// CPU time is measured: a loaded machine stretches the wall clock).
func TestEnvoyLocalImportBoundsTheDescriptors(t *testing.T) {
	file := func(descriptors int) string {
		var b strings.Builder
		b.WriteString(`route_config:
  virtual_hosts:
  - name: shop
    domains: ["shop.example.com"]
    rate_limits:
    - actions: [{request_headers: {header_name: x-tenant, descriptor_key: tenant}}]
    typed_per_filter_config:
      envoy.filters.http.local_ratelimit:
        "@type": type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit
        stat_prefix: shop
        filter_enabled: {default_value: {numerator: 100, denominator: HUNDRED}}
        descriptors:
`)
		for i := range descriptors {
			fmt.Fprintf(&b, "        - entries: [{key: tenant, value: t%d}]\n          token_bucket: {max_tokens: 1, tokens_per_fill: 1, fill_interval: 60s}\n", i)
		}
		b.WriteString("    routes:\n    - match: {prefix: \"/\"}\n      route: {cluster: shop}\n")
		return b.String()
	}
	before := cpuTime(t)
	_, err := migrate.Import("envoy", file(migrate.MaxPlaces+1), "envoy.yaml")
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than the %d", migrate.MaxPlaces)) {
		t.Errorf("%d descriptors: %v, want refused saying the bound", migrate.MaxPlaces+1, err)
	}
	if d := cpuTime(t) - before; d > 2*time.Second {
		t.Errorf("refusing took %v of CPU", d)
	}
	if _, err := migrate.Import("envoy", file(10), "envoy.yaml"); err != nil {
		t.Errorf("10 descriptors: %v", err)
	}
}
