package envoy_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/envoy"
)

// mergeMany is a rules file of n keys in one anchored mapping and one
// mapping merging it m times (<<: [*a, *a, …]): about 10n + 4m bytes,
// whose expansion holds n + 2 keys, but whose merges set n × m keys, one
// by one.
func mergeMany(n, m int) string {
	var b strings.Builder
	b.WriteString("domain: api\ndescriptors:\n  - &a {")
	for i := range n {
		fmt.Fprintf(&b, "k%d: 1, ", i)
	}
	b.WriteString("key: x}\n  - {<<: [" + strings.Repeat("*a, ", m) + "*a], key: y}\n")
	return b.String()
}

// A file of ~200 KB (well within the 4 MiB a rules file may be) whose one
// merge key names one mapping of 10,000 keys 25,000 times would make the
// expansion set 250,000,000 keys: tens of seconds of CPU per load (and
// per reload), growing with the square of the file. gopkg.in/yaml.v2,
// which envoyproxy/ratelimit reads the file with, refuses it quickly
// ("document contains excessive aliasing"), and so does the service: the
// values that merge keys and aliases copy are bounded by the file's size.
func TestRulesMergingOneMappingManyTimesAreRefused(t *testing.T) {
	_, err := envoy.LoadRules("rules.yaml", []byte(mergeMany(10_000, 25_000)))
	want := "rules.yaml:4:6: descriptors[1].<<: the document's aliases and merge keys copy more than "
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("got %v, want %s…", err, want)
	}
}

// nestedAliases is a rules file of n descriptors (&a0), n descriptors
// each aliasing that list (&a1), and n descriptors each aliasing &a1:
// about 150n bytes, whose expansion holds n³ leaf descriptors with a rate
// limit.
func nestedAliases(n int) string {
	var b strings.Builder
	b.WriteString("domain: api\ndescriptors:\n  - key: k0\n    descriptors: &a0\n")
	for i := range n {
		fmt.Fprintf(&b, "      - {key: c%d, rate_limit: {unit: second, requests_per_unit: 5}}\n", i)
	}
	b.WriteString("  - key: k1\n    descriptors: &a1\n")
	for i := range n {
		fmt.Fprintf(&b, "      - {key: d%d, descriptors: *a0}\n", i)
	}
	b.WriteString("  - key: k2\n    descriptors:\n")
	for i := range n {
		fmt.Fprintf(&b, "      - {key: e%d, descriptors: *a1}\n", i)
	}
	return b.String()
}

// An alias copies everything it stands for, aliases within included: a
// 5.8 KB file of aliases of aliases (40 × 40 × 40 descriptors, ~600,000
// nodes once expanded, of 780 written) is refused by gopkg.in/yaml.v2, which
// envoyproxy/ratelimit reads it with ("document contains excessive
// aliasing"), and so by the service, rather than loaded (and walked on
// every load and reload) as 64,000 descriptors. A file of 10 × 10 × 10,
// within yaml.v2's bound, loads.
func TestRulesWhoseAliasesOfAliasesCopyTooMuchAreRefused(t *testing.T) {
	_, err := envoy.LoadRules("rules.yaml", []byte(nestedAliases(40)))
	want := "rules.yaml:93:32: descriptors[2].descriptors[4].descriptors: the document's aliases and merge keys copy more than 77220 values by here"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("got %v, want %s…", err, want)
	}
	if _, err := envoy.LoadRules("rules.yaml", []byte(nestedAliases(10))); err != nil {
		t.Errorf("a file of 10 × 10 × 10 descriptors: %v", err)
	}
}

// A rules file of nearly 4 MiB whose every descriptor merges a shared
// mapping and aliases a shared rate_limit, as envoyproxy/ratelimit loads
// it, loads: the bound on what merge keys and aliases copy grows with the
// file.
func TestALargeRulesFileOfMergesAndAliasesLoads(t *testing.T) {
	var b strings.Builder
	b.WriteString("domain: api\ndescriptors:\n" +
		"  - &base {key: tenant, value: t0, shadow_mode: false, rate_limit: &std {unit: minute, requests_per_unit: 100}}\n")
	for i := 1; b.Len() < 4<<20-100; i++ {
		fmt.Fprintf(&b, "  - {<<: *base, value: tenant-%07d.eu-west-1.api.example.com, rate_limit: *std}\n", i)
	}
	if _, err := envoy.LoadRules("rules.yaml", []byte(b.String())); err != nil {
		t.Fatalf("a %d-byte file: %v", b.Len(), err)
	}
}

// A merge key's value is a mapping, an alias of one, or a list of them:
// gopkg.in/yaml.v2 (and yaml.v3), as envoyproxy/ratelimit reads the file,
// refuse an alias of a list ("map merge requires map or sequence of maps
// as the value"), and so does the service, rather than enforce a rule
// envoyproxy/ratelimit does not load.
func TestRulesRefuseAMergeOfAnAliasedList(t *testing.T) {
	f := "domain: api\ndescriptors:\n  - key: a\n    descriptors: &l [{key: x}]\n" +
		"  - {<<: *l, rate_limit: {unit: second, requests_per_unit: 5}}\n"
	_, err := envoy.LoadRules("rules.yaml", []byte(f))
	want := "rules.yaml:5:10: descriptors[1].<<: want a mapping (or a list of mappings) to merge, got an alias of a list (*l)"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("got %v, want %s…", err, want)
	}
}
