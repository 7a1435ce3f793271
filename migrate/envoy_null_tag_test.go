package migrate_test

import (
	"strings"
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

// A unit is read as envoyproxy/ratelimit reads it, by its upper case: the
// import lists what the service loads, and refuses what it refuses.
func TestEnvoyImportReadsAUnitByItsUpperCase(t *testing.T) {
	for unit, want := range map[string]string{"Minute": "minute", "mınute": "minute", "ſecond": "second"} {
		src := "domain: api\ndescriptors:\n  - {key: user, rate_limit: {unit: " + unit + ", requests_per_unit: 1}}\n"
		limits := serviceLimits(t, src)
		tr, err := migrate.Import("envoy", src, "rules.yaml")
		if err != nil {
			t.Errorf("unit %q: sluice import refuses rules sluice's service loads (%v): %v", unit, limits, err)
			continue
		}
		if len(tr.Rules) != 1 || !strings.HasSuffix(tr.Rules[0].Source, "per "+want) {
			t.Errorf("unit %q: the import lists %+v, want 1 rule per %s", unit, tr.Rules, want)
		}
	}
	const kelvin = "domain: api\ndescriptors:\n  - {key: user, rate_limit: {unit: wee\u212a, requests_per_unit: 1}}\n"
	if _, err := migrate.Import("envoy", kelvin, "rules.yaml"); err == nil {
		t.Error("unit weeK (the Kelvin sign) is imported; envoyproxy/ratelimit and sluice's service refuse it")
	}
}
