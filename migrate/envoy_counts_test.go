package migrate_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// The import keeps an Envoy rules file whole for sluice's Envoy service
// (docs/migration.md), so it reads requests_per_unit as the service does.
// 1_000 is 1000 to gopkg.in/yaml.v2 (YAML 1.1 integers take underscores),
// as envoyproxy/ratelimit reads the file, and to the service. 010 is 8 to
// yaml.v2 (octal), which the service refuses rather than read as 10.
func TestEnvoyImportReadsCountsAsTheServiceDoes(t *testing.T) {
	rules := func(count string) string {
		return "domain: api\ndescriptors:\n  - key: tenant\n    rate_limit: {unit: second, requests_per_unit: " + count + "}\n"
	}
	tr, err := migrate.Import("envoy", rules("1_000"), "rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Rules) != 1 || tr.Rules[0].Quantity != 1000 {
		t.Errorf("rules %+v, want one of 1000 per second", tr.Rules)
	}
	_, err = migrate.Import("envoy", rules("010"), "rules.yaml")
	if want := `rules.yaml:4:51: descriptors[0].rate_limit.requests_per_unit: "010" has a leading zero (octal in YAML 1.1)`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("got %v, want %s…", err, want)
	}
}

// A boolean written with its tag (shadow_mode: !!bool yes) is a boolean to
// yaml.v2 and to the service: the import lists the rule as shadow, as the
// service enforces it.
func TestEnvoyImportReadsTaggedBooleans(t *testing.T) {
	f := "domain: api\ndescriptors:\n  - key: tenant\n    shadow_mode: !!bool yes\n    rate_limit: {unit: second, requests_per_unit: 5}\n"
	tr, err := migrate.Import("envoy", f, "rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Rules) != 1 || !tr.Rules[0].Shadow {
		t.Errorf("rules %+v, want one in shadow", tr.Rules)
	}
}
