package envoy_test

import (
	"testing"

	"github.com/sluice-dev/sluice/envoy"
)

// A boolean written with its tag (shadow_mode: !!bool true, or !!bool yes)
// is a boolean to gopkg.in/yaml.v2, as envoyproxy/ratelimit reads the
// file, and to any YAML reader: the tag says so. The service reads it as
// one, as it reads a count tagged !!int.
func TestRulesReadTaggedBooleans(t *testing.T) {
	for _, field := range []string{
		"shadow_mode: !!bool true\n    rate_limit: {unit: second, requests_per_unit: 5}",
		"quota_mode: !!bool yes\n    rate_limit: {unit: second, requests_per_unit: 5}",
		"rate_limit: {unlimited: !!bool true}",
		"detailed_metric: !!bool false\n    rate_limit: {unit: second, requests_per_unit: 5}",
		"shadow_mode: !!bool \"on\"\n    rate_limit: {unit: second, requests_per_unit: 5}",
	} {
		f := "domain: api\ndescriptors:\n  - key: tenant\n    " + field + "\n"
		if _, err := envoy.LoadRules("rules.yaml", []byte(f)); err != nil {
			t.Errorf("%s: %v", field, err)
		}
	}
	f := "domain: api\ndescriptors:\n  - key: tenant\n    shadow_mode: !!str true\n    rate_limit: {unit: second, requests_per_unit: 5}\n"
	if _, err := envoy.LoadRules("rules.yaml", []byte(f)); err == nil {
		t.Error("loaded shadow_mode: !!str true, a string to yaml.v2")
	}
}
