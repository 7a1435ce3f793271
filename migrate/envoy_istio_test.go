package migrate_test

import (
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportIstioWorkloadSelectorIsReported: an EnvoyFilter with a
// workloadSelector, as Istio's local rate limit task writes it, limits the
// sidecars of the workloads it selects only; the imported rule limits every
// request sluice sees, and the report says which workloads the source
// limited.
func TestImportIstioWorkloadSelectorIsReported(t *testing.T) {
	tr, err := migrate.Import("envoy", `apiVersion: networking.istio.io/v1alpha3
kind: EnvoyFilter
metadata:
  name: filter-local-ratelimit-svc
  namespace: istio-system
spec:
  workloadSelector:
    labels:
      app: productpage
  configPatches:
    - applyTo: HTTP_FILTER
      match:
        context: SIDECAR_INBOUND
      patch:
        operation: INSERT_BEFORE
        value:
          name: envoy.filters.http.local_ratelimit
          typed_config:
            "@type": type.googleapis.com/udpa.type.v1.TypedStruct
            type_url: type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit
            value:
              stat_prefix: http_local_rate_limiter
              token_bucket: {max_tokens: 4, tokens_per_fill: 4, fill_interval: 60s}
              filter_enabled:
                default_value: {numerator: 100, denominator: HUNDRED}
              filter_enforced:
                default_value: {numerator: 100, denominator: HUNDRED}
`, "envoyfilter.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !hasDifference(tr, false, "app=productpage") {
		t.Errorf("the workloads the EnvoyFilter selects are not reported: %+v", tr.Differences)
	}
}
