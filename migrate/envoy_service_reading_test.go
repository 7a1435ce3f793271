package migrate_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/migrate"
)

// The import reads a rules file's fields with the helpers sluice's Envoy
// service reads them with (docs/migration.md), so the rules it lists are
// the ones the service enforces. A unit or a domain tagged !!binary is the
// text its base64 encodes (bWludXRl is "minute", YXBp "api"), as it is to
// yaml.v2 and to the service.
func TestEnvoyImportReadsBinaryTaggedUnitAndDomain(t *testing.T) {
	const unit = "domain: api\ndescriptors:\n  - {key: user, rate_limit: {unit: !!binary bWludXRl, requests_per_unit: 1}}\n"
	if limits := serviceLimits(t, unit); len(limits) != 1 {
		t.Fatalf("the service loads %v", limits)
	}
	tr, err := migrate.Import("envoy", unit, "rules.yaml")
	if err != nil {
		t.Errorf("unit !!binary bWludXRl (minute): sluice import refuses rules sluice's service loads: %v", err)
	} else if len(tr.Rules) != 1 || !strings.HasSuffix(tr.Rules[0].Source, "per minute") {
		t.Errorf("unit !!binary bWludXRl: the import lists %+v, want 1 rule per minute", tr.Rules)
	}
	const domain = "domain: !!binary YXBp\ndescriptors:\n  - {key: user, rate_limit: {unit: minute, requests_per_unit: 1}}\n"
	serviceLimits(t, domain)
	tr, err = migrate.Import("envoy", domain, "rules.yaml")
	if err != nil {
		t.Fatalf("domain !!binary YXBp: %v", err)
	}
	if len(tr.Rules) != 1 || !strings.HasPrefix(tr.Rules[0].Source, "api user") {
		t.Errorf("domain !!binary YXBp (api): the import lists %+v, want the rule of domain api", tr.Rules)
	}
}

// `value: null` (or Null, NULL, ~) is no value to yaml.v2 and to the
// service, whose rule then limits every value of the key: the import lists
// the rule of the key with no value, not of the value "null".
func TestEnvoyImportReadsANullValueAsNoValue(t *testing.T) {
	for _, v := range []string{"null", "Null", "NULL", "~"} {
		src := "domain: api\ndescriptors:\n  - {key: user, value: " + v + ", rate_limit: {unit: minute, requests_per_unit: 1}}\n"
		serviceLimits(t, src)
		tr, err := migrate.Import("envoy", src, "rules.yaml")
		if err != nil {
			t.Errorf("value: %s: %v", v, err)
			continue
		}
		if len(tr.Rules) != 1 || strings.Contains(tr.Rules[0].Source, "=") {
			t.Errorf("value: %s: the import lists %+v; want the rule of key user with no value (every user), as the service reads it", v, tr.Rules)
		}
	}
}

// `descriptors:` with nothing after it, or ~, is an empty list to yaml.v2
// and to the service, at the top and nested alike: the import reads it so.
func TestEnvoyImportReadsNullDescriptorsAsNone(t *testing.T) {
	for name, src := range map[string]string{
		"nested ~":   "domain: api\ndescriptors:\n  - {key: user, descriptors: ~, rate_limit: {unit: minute, requests_per_unit: 1}}\n",
		"nested":     "domain: api\ndescriptors:\n  - key: user\n    descriptors:\n    rate_limit: {unit: minute, requests_per_unit: 1}\n",
		"root empty": "domain: api\ndescriptors:\n",
	} {
		if _, err := envoy.LoadRules("rules.yaml", []byte(src)); err != nil {
			t.Fatalf("%s: the service refuses it: %v", name, err)
		}
		if _, err := migrate.Import("envoy", src, "rules.yaml"); err != nil {
			t.Errorf("%s: sluice import refuses rules sluice's service loads: %v", name, err)
		}
	}
}

// Rules the service refuses (and yaml.v2 or envoyproxy/ratelimit refuse
// too) are not imported as if they were enforced: `key: null` is an empty
// key, `domain: null` an empty domain, and a text tagged !!null that is
// not a null text, or tagged as another type it is not, is refused by
// yaml.v2 ("cannot decode !!str `alice` as a !!null").
func TestEnvoyImportRefusesWhatTheServiceRefuses(t *testing.T) {
	const rl = "rate_limit: {unit: minute, requests_per_unit: 1}"
	for name, src := range map[string]string{
		"key: null":            "domain: api\ndescriptors:\n  - {key: null, " + rl + "}\n",
		"domain: null":         "domain: null\ndescriptors:\n  - {key: user, " + rl + "}\n",
		"value: !!null alice":  "domain: api\ndescriptors:\n  - {key: user, value: !!null alice, " + rl + "}\n",
		"key: !!null user":     "domain: api\ndescriptors:\n  - {key: !!null user, " + rl + "}\n",
		"unit: !!null minute":  "domain: api\ndescriptors:\n  - {key: user, rate_limit: {unit: !!null minute, requests_per_unit: 1}}\n",
		"rate_limit: !!null a": "domain: api\ndescriptors:\n  - {key: user, rate_limit: !!null alice}\n",
		"!!int key: user":      "domain: api\ndescriptors:\n  - {!!int key: user, " + rl + "}\n",
		"value: !!bool alice":  "domain: api\ndescriptors:\n  - {key: user, value: !!bool alice, " + rl + "}\n",
	} {
		if _, err := envoy.LoadRules("rules.yaml", []byte(src)); err == nil {
			t.Fatalf("%s: the service loads it", name)
		}
		if tr, err := migrate.Import("envoy", src, "rules.yaml"); err == nil {
			t.Errorf("%s: sluice's service refuses the rules; the import lists %+v", name, tr.Rules)
		}
	}
}

// `name: null` is no name to yaml.v2 and to the service, whose limit takes
// the descriptor's default name: the import does not name the rule "null".
func TestEnvoyImportReadsANullNameAsNoName(t *testing.T) {
	const src = "domain: api\ndescriptors:\n  - {key: user, rate_limit: {unit: minute, requests_per_unit: 1, name: null}}\n"
	limits := serviceLimits(t, src)
	tr, err := migrate.Import("envoy", src, "rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Rules) != 1 || tr.Rules[0].Name == "null" {
		t.Errorf("the import lists %+v (the service: %v); want the rule without the name null", tr.Rules, limits)
	}
}

// `value: ! ~` carries the non-specific tag `!`, which makes the scalar the
// text "~" (YAML 1.1 and 1.2; gopkg.in/yaml.v2, and so
// envoyproxy/ratelimit, read the value "~"), not no value: the import
// lists the rule of that one value, as the service reads it, and the
// shadow rules file it writes keeps it a text.
func TestEnvoyImportReadsNonSpecificTagAsText(t *testing.T) {
	const src = "domain: api\ndescriptors:\n  - key: user\n    value: ! ~\n    rate_limit: {unit: minute, requests_per_unit: 1}\n"
	tr, err := migrate.Import("envoy", src, "rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Rules) != 1 || tr.Rules[0].Source != "api user=~: 1 per minute" {
		t.Errorf("value: ! ~: the import lists %+v; want the rule of the value ~ (api user=~: 1 per minute), as yaml.v2 reads it", tr.Rules)
	}
	files, err := tr.Files(false)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.ReplaceAll(strings.Join(serviceLimits(t, files[migrate.EnvoyRulesFile]), "\n"), " (shadow)", "")
	if want := strings.Join(serviceLimits(t, src), "\n"); got != want {
		t.Errorf("the shadow rules file holds %s, want the rules of the file, in shadow: %s\n%s", got, want, files[migrate.EnvoyRulesFile])
	}
}

// A `<<` tagged `!`, plain or quoted, is a merge key to yaml.v2 and to the
// service (docs/envoy.md). The shadow import rewrites the rules through
// yaml.v3, which would write a quoted one back as the text "<<", no merge
// key, and the service would refuse the shadow rules file ("unknown
// field"): it is written as a merge key, and the file loads the rules as
// written, in shadow.
func TestEnvoyShadowImportWritesABangTaggedMergeKeyAsAMergeKey(t *testing.T) {
	for _, key := range []string{`! "<<"`, `! '<<'`, `! <<`} {
		src := "domain: api\ndescriptors:\n  - {key: a, rate_limit: &r {unit: minute, requests_per_unit: 1}}\n  - {key: user, " + key + ": {rate_limit: *r}}\n"
		tr, err := migrate.Import("envoy", src, "rules.yaml")
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		files, err := tr.Files(false)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.ReplaceAll(strings.Join(serviceLimits(t, files[migrate.EnvoyRulesFile]), "\n"), " (shadow)", "")
		if want := strings.Join(serviceLimits(t, src), "\n"); got != want {
			t.Errorf("%s: the shadow rules file holds %s, want the rules of the file, in shadow: %s\n%s", key, got, want, files[migrate.EnvoyRulesFile])
		}
	}
}
