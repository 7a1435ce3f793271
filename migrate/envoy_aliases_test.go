package migrate_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/migrate"
)

// serviceLimits loads the rules file text as sluice's Envoy service does
// (envoy.LoadRuleFiles) and returns its limits written out, sorted.
func serviceLimits(t *testing.T, text string) []string {
	t.Helper()
	p := filepath.Join(t.TempDir(), migrate.EnvoyRulesFile)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	rules, err := envoy.LoadRuleFiles(p)
	if err != nil {
		t.Fatalf("sluice's service refuses the rules: %v\n%s", err, text)
	}
	var out []string
	for _, l := range rules.Limits() {
		out = append(out, l.String())
	}
	slices.Sort(out)
	return out
}

// shadowRulesOf imports src and returns the shadow import's rules file.
func shadowRulesOf(t *testing.T, src string) (*migrate.Translation, string) {
	t.Helper()
	tr, err := migrate.Import("envoy", src, "rules.yaml")
	if err != nil {
		t.Fatalf("sluice import refuses rules sluice's service loads: %v", err)
	}
	files, err := tr.Files(false)
	if err != nil {
		t.Fatal(err)
	}
	return tr, files[migrate.EnvoyRulesFile]
}

// Rules files whose rate limits come from anchors, aliases and merge keys:
// envoyproxy/ratelimit reads them with yaml.v2, which expands them, and so
// does sluice's Envoy service (docs/envoy.md).
var aliasedEnvoyRules = map[string]string{
	"aliased rate_limit": "domain: api\ndescriptors:\n" +
		"  - key: tenant\n    rate_limit: &rl\n      unit: second\n      requests_per_unit: 5\n" +
		"  - key: remote_address\n    rate_limit: *rl\n",
	"merged rate_limit": "domain: api\ndescriptors:\n" +
		"  - key: tenant\n    rate_limit: &rl\n      unit: second\n      requests_per_unit: 5\n" +
		"  - key: remote_address\n    rate_limit:\n      <<: *rl\n      requests_per_unit: 2\n",
	"merged descriptor, shadow_mode false": "domain: api\ndescriptors:\n" +
		"  - &base\n    key: tenant\n    rate_limit:\n      unit: second\n      requests_per_unit: 1\n" +
		"  - <<: *base\n    key: remote_address\n    shadow_mode: false\n",
	"merged list, rate_limit overlaid": "domain: api\ndescriptors:\n" +
		"  - &a\n    key: a\n    rate_limit: {unit: minute, requests_per_unit: 100, name: per_ip}\n" +
		"  - &b\n    key: b\n    shadow_mode: false\n    rate_limit: {unit: hour, requests_per_unit: 3}\n" +
		"  - <<: [*a, *b]\n    key: both\n    rate_limit: {requests_per_unit: 7}\n",
	"nested descriptors under an alias": "domain: api\ndescriptors:\n" +
		"  - &outer\n    key: outer\n    descriptors:\n" +
		"      - key: inner\n        rate_limit: {unit: second, requests_per_unit: 1}\n" +
		"        descriptors: [{key: deep, shadow_mode: false, rate_limit: {unit: day, requests_per_unit: 9}}]\n" +
		"  - <<: *outer\n    key: outer2\n",
	"anchor on a descriptors list": "domain: api\ndescriptors:\n" +
		"  - key: a\n    descriptors: &kids\n" +
		"      - key: b\n        rate_limit: {unit: second, requests_per_unit: 1}\n" +
		"      - key: c\n        shadow_mode: false\n        rate_limit: {unit: minute, requests_per_unit: 2}\n" +
		"  - key: z\n    descriptors: *kids\n",
	"shadow_mode written before a merge key": "domain: api\ndescriptors:\n" +
		"  - &base\n    key: tenant\n    rate_limit: {unit: second, requests_per_unit: 1}\n" +
		"  - shadow_mode: &off false\n    <<: *base\n    key: remote_address\n    detailed_metric: *off\n",
}

// The import reads a rules file whose rate limits come from aliases and
// merge keys as sluice's service does: it refuses none (docs/migration.md:
// the import keeps the file whole) and its report lists each rule the
// service reads, with its quantity.
func TestEnvoyImportReadsAliasedAndMergedRules(t *testing.T) {
	for name, src := range aliasedEnvoyRules {
		t.Run(name, func(t *testing.T) {
			limits := serviceLimits(t, src)
			tr, err := migrate.Import("envoy", src, "rules.yaml")
			if err != nil {
				t.Fatalf("sluice import refuses rules sluice's service loads: %v", err)
			}
			if len(tr.Rules) != len(limits) {
				t.Fatalf("the report lists %d rules, the service reads %d: %v", len(tr.Rules), len(limits), limits)
			}
		})
	}
	// The merged rate_limit's own requests_per_unit is the rule's.
	tr, err := migrate.Import("envoy", aliasedEnvoyRules["merged rate_limit"], "rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tr.Report(), "api remote_address: 2 per second") {
		t.Errorf("the report does not list remote_address at 2 per second:\n%s", tr.Report())
	}
}

// The shadow import (docs/migration.md: "a copy of your file with
// shadow_mode: true added to every rule") writes every rule the service
// reads in shadow mode, however it gets its rate_limit (written, aliased,
// merged, under an aliased descriptors list): each descriptor with a rate
// limit carries shadow_mode: true at its own level, after its merge keys,
// so that a merged shadow_mode: false cannot undo it. The anchors, aliases
// and merge keys stay as written.
func TestEnvoyShadowImportShadowsEveryRuleTheServiceReads(t *testing.T) {
	for name, src := range aliasedEnvoyRules {
		t.Run(name, func(t *testing.T) {
			want := serviceLimits(t, src)
			tr, rules := shadowRulesOf(t, src)
			got := serviceLimits(t, rules)
			if len(got) != len(want) {
				t.Fatalf("the shadow rules hold %d limits, the source %d:\n%s", len(got), len(want), rules)
			}
			for _, l := range got {
				if !strings.HasSuffix(l, "(shadow)") {
					t.Errorf("the shadow import enforces %s:\n%s", l, rules)
				}
			}
			if len(tr.Rules) != len(want) {
				t.Errorf("the report lists %d rules, the service reads %d: %v", len(tr.Rules), len(want), want)
			}
			for _, l := range tr.Rules {
				if !strings.Contains(tr.Report(), l.Source) {
					t.Errorf("the report does not list %s", l.Source)
				}
			}
			for _, mark := range []string{"&", "*", "<<:"} {
				if strings.Contains(src, mark) && !strings.Contains(rules, mark) {
					t.Errorf("the shadow rules lost the source's %q:\n%s", mark, rules)
				}
			}
		})
	}
	_, rules := shadowRulesOf(t, aliasedEnvoyRules["merged descriptor, shadow_mode false"])
	if !strings.Contains(rules, "  - <<: *base\n    key: remote_address\n    shadow_mode: true\n") {
		t.Errorf("the merging descriptor's own shadow_mode is not true:\n%s", rules)
	}
}

// A descriptor without a rate limit may merge one that has one (and clear
// its rate_limit): the shadow_mode: true the shadow import writes in the
// merged descriptor must not reach it, since the service refuses
// shadow_mode without a rate_limit; it keeps shadow_mode false, written at
// its own level. An anchored shadow_mode value that another field aliases
// keeps that field's value.
func TestEnvoyShadowImportLeavesDescriptorsWithoutARateLimitAlone(t *testing.T) {
	src := "domain: api\ndescriptors:\n" +
		"  - &base\n    key: tenant\n    rate_limit: {unit: second, requests_per_unit: 1}\n" +
		"  - <<: *base\n    key: cleared\n    rate_limit: null\n" +
		"  - shadow_mode: false\n    <<: *base\n    key: cleared_too\n    rate_limit:\n" +
		"  - key: u\n    shadow_mode: &off false\n    rate_limit: {unit: hour, requests_per_unit: 3}\n" +
		"  - key: v\n    rate_limit: {unlimited: *off, unit: minute, requests_per_unit: 4}\n"
	want := serviceLimits(t, src)
	_, rules := shadowRulesOf(t, src)
	got := serviceLimits(t, rules)
	if len(got) != len(want) || len(got) != 3 {
		t.Fatalf("the shadow rules hold %v, the source %v:\n%s", got, want, rules)
	}
	for _, l := range got {
		if !strings.HasSuffix(l, "(shadow)") {
			t.Errorf("the shadow import enforces %s:\n%s", l, rules)
		}
	}
}

// unlimited, replaces and detailed_metric merged into a descriptor are
// read as if written in it: the import's report and the service's reading
// of the shadow rules are those of the same file written out.
func TestEnvoyImportReadsMergedFieldsAsWrittenInline(t *testing.T) {
	merged := "domain: api\ndescriptors:\n" +
		"  - key: remote_address\n    rate_limit: {unit: minute, requests_per_unit: 100, name: per_ip}\n" +
		"  - &trusted\n    key: trusted\n    detailed_metric: true\n    rate_limit: {unlimited: true, name: trusted, replaces: [{name: per_ip}]}\n" +
		"  - <<: *trusted\n    key: partner\n    rate_limit: {name: partner}\n" +
		"  - <<: *trusted\n    key: metered\n    rate_limit: {unlimited: false, unit: hour, requests_per_unit: 5, name: metered}\n"
	inline := "domain: api\ndescriptors:\n" +
		"  - key: remote_address\n    rate_limit: {unit: minute, requests_per_unit: 100, name: per_ip}\n" +
		"  - key: trusted\n    detailed_metric: true\n    rate_limit: {unlimited: true, name: trusted, replaces: [{name: per_ip}]}\n" +
		"  - key: partner\n    detailed_metric: true\n    rate_limit: {unlimited: true, name: partner, replaces: [{name: per_ip}]}\n" +
		"  - key: metered\n    detailed_metric: true\n    rate_limit: {unlimited: false, unit: hour, requests_per_unit: 5, name: metered, replaces: [{name: per_ip}]}\n"
	trM, rulesM := shadowRulesOf(t, merged)
	trI, rulesI := shadowRulesOf(t, inline)
	if !slices.Equal(trM.Rules, trI.Rules) {
		t.Errorf("the import reads the merged rules as %v, written inline as %v", trM.Rules, trI.Rules)
	}
	if !strings.Contains(trM.Report(), "api partner: unlimited") {
		t.Errorf("the report does not list partner as unlimited:\n%s", trM.Report())
	}
	if m, i := serviceLimits(t, rulesM), serviceLimits(t, rulesI); !slices.Equal(m, i) {
		t.Errorf("the service reads the merged shadow rules as %v, written inline as %v", m, i)
	}
}
