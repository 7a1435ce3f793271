package envoy_test

import (
	"testing"

	"github.com/sluice-dev/sluice/envoy"
)

// envoyproxy/ratelimit decodes its rules file with yaml.v2 into structs
// whose shadow_mode, quota_mode, detailed_metric, value_to_metric,
// share_threshold and rate_limit.unlimited are Go bools: a field written
// with no value (`shadow_mode:`), `~` or `null` is decoded as false, and
// such a file loads there; it loads in sluice's service too. A text tagged
// !!null is refused there ("cannot decode !!str as a !!null"), and here.
func TestANullBooleanIsFalseAsInRatelimit(t *testing.T) {
	const rl = "    rate_limit: {unit: minute, requests_per_unit: 1}\n"
	for name, src := range map[string]string{
		"shadow_mode empty": "domain: d\ndescriptors:\n  - key: k\n    shadow_mode:\n" + rl,
		"shadow_mode ~":     "domain: d\ndescriptors:\n  - key: k\n    shadow_mode: ~\n" + rl,
		"quota_mode null":   "domain: d\ndescriptors:\n  - key: k\n    quota_mode: null\n" + rl,
		"detailed_metric":   "domain: d\ndescriptors:\n  - key: k\n    detailed_metric:\n" + rl,
		"value_to_metric":   "domain: d\ndescriptors:\n  - key: k\n    value_to_metric:\n" + rl,
		"share_threshold":   "domain: d\ndescriptors:\n  - key: k*\n    share_threshold:\n" + rl,
		"unlimited":         "domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: minute, requests_per_unit: 1, unlimited: }\n",
	} {
		if _, err := envoy.LoadRules("rules.yaml", []byte(src)); err != nil {
			t.Errorf("%s: envoyproxy/ratelimit loads it (yaml.v2 reads the null as false); sluice refuses it: %v", name, err)
		}
	}
	if _, err := envoy.LoadRules("rules.yaml", []byte("domain: d\ndescriptors:\n  - key: k\n    shadow_mode: !!null yes\n"+rl)); err == nil {
		t.Error("shadow_mode: !!null yes loaded; want it refused, as yaml.v2 refuses it")
	}
}
