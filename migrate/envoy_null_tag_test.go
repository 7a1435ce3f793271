package migrate_test

import (
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// A rate_limit mapping tagged !!null is a rate limit to yaml.v2, which
// decodes a mapping by its kind whatever its tag, and to sluice's Envoy
// service: the import lists it too.
func TestEnvoyImportReadsANullTaggedRateLimit(t *testing.T) {
	const src = "domain: api\ndescriptors:\n" +
		"  - {key: user, rate_limit: !!null {unit: minute, requests_per_unit: 1}}\n"
	limits := serviceLimits(t, src)
	tr, err := migrate.Import("envoy", src, "rules.yaml")
	if err != nil {
		t.Fatalf("sluice import refuses rules sluice's service loads: %v", err)
	}
	if len(tr.Rules) != 1 || len(limits) != 1 {
		t.Errorf("the import lists %d rules, the service reads %v: want the 1 rule each", len(tr.Rules), limits)
	}
}
