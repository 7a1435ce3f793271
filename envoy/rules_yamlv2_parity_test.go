package envoy_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/envoy"
)

// yaml.v2 (envoyproxy/ratelimit) decodes a sequence or a mapping by its
// kind whatever tag it carries: `descriptors: !!null [...]` is a list of
// descriptors there, each limited, and `rate_limit: !!null {...}` a rate
// limit. So they are here, rather than read as nothing, which would drop
// their limits silently. (Checked with gopkg.in/yaml.v2 v2.4.0 and
// ratelimit's ConfigFileContentToYaml.)
func TestANullTaggedListOrMappingIsRead(t *testing.T) {
	for _, c := range []struct{ name, file string }{
		{"descriptors", "domain: api\ndescriptors: !!null\n" +
			"  - {key: user, value: alice, rate_limit: {unit: minute, requests_per_unit: 1}}\n"},
		{"child descriptors", "domain: api\ndescriptors:\n  - key: user\n    descriptors: !!null\n" +
			"      - {key: path, rate_limit: {unit: minute, requests_per_unit: 1}}\n"},
		{"rate_limit", "domain: api\ndescriptors:\n" +
			"  - {key: user, rate_limit: !!null {unit: minute, requests_per_unit: 1}}\n"},
	} {
		r, err := envoy.LoadRules("rules.yaml", []byte(c.file))
		if err != nil {
			t.Errorf("%s tagged !!null: yaml.v2 reads the file; sluice refused it: %v", c.name, err)
			continue
		}
		if n := len(r.Limits()); n != 1 {
			t.Errorf("%s tagged !!null: %d limits, want the 1 rule yaml.v2 reads", c.name, n)
		}
	}
	// replaces: !!null [...] is read too: a limit named in it is replaced,
	// and one that names itself is refused.
	const replaces = "domain: api\ndescriptors:\n" +
		"  - {key: user, rate_limit: {unit: minute, requests_per_unit: 1, name: self, replaces: !!null [{name: self}]}}\n"
	if _, err := envoy.LoadRules("rules.yaml", []byte(replaces)); err == nil || !strings.Contains(err.Error(), "cannot replace itself") {
		t.Errorf("replaces: !!null [{name: self}]: got %v, want the list read (a limit cannot replace itself)", err)
	}
}

// A document whose mapping is tagged !!null (--- !!null) is a domain in
// yaml.v2: envoyproxy/ratelimit loads this file's domain api, and so does
// sluice, rather than skipping it as an empty document.
func TestANullTaggedDocumentIsADomain(t *testing.T) {
	const file = "--- !!null\ndomain: api\ndescriptors:\n  - {key: b, rate_limit: {unit: minute, requests_per_unit: 1}}\n"
	r, err := envoy.LoadRules("rules.yaml", []byte(file))
	if err != nil {
		t.Fatalf("yaml.v2 reads the domain api; sluice refused the file: %v", err)
	}
	if got := strings.Join(r.Domains(), ","); got != "api" || len(r.Limits()) != 1 {
		t.Errorf("domains %q, %d limits; want api with 1 limit", got, len(r.Limits()))
	}
}

// yaml.v2 decodes a mapping key tagged !!binary as the bytes it encodes
// (for the generic map envoyproxy/ratelimit validates keys with, and for
// the struct field name): `!!binary a2V5: user` is the field key there
// (a2V5 is base64 of "key"), written or aliased, and so it is here. A key
// tagged !!binary that is not base64 is refused, as yaml.v2 refuses it.
func TestABinaryTaggedKeyIsTheFieldItEncodes(t *testing.T) {
	const file = "domain: api\ndescriptors:\n" +
		"  - {&k !!binary a2V5: user, value: alice, rate_limit: {unit: minute, requests_per_unit: 1}}\n" +
		"  - {*k : user, value: bob, rate_limit: {unit: minute, requests_per_unit: 1}}\n"
	r, err := envoy.LoadRules("rules.yaml", []byte(file))
	if err != nil {
		t.Fatalf("envoyproxy/ratelimit loads the file (key user, values alice and bob); sluice: %v", err)
	}
	if n := len(r.Limits()); n != 2 {
		t.Errorf("%d limits, want 2", n)
	}
	const bad = "domain: api\ndescriptors:\n" +
		"  - {!!binary a2V5!: user, rate_limit: {unit: minute, requests_per_unit: 1}}\n"
	if _, err := envoy.LoadRules("rules.yaml", []byte(bad)); err == nil || !strings.Contains(err.Error(), "rules.yaml:3:") || !strings.Contains(err.Error(), "not base64") {
		t.Errorf("a key tagged !!binary that is not base64: got %v, want it refused at rules.yaml:3", err)
	}
}

// A text tagged !!null is refused by yaml.v2 unless it is a null text
// (empty, ~, null, Null, NULL): `value: !!null alice` is "cannot decode
// !!str `alice` as a !!null" there, so envoyproxy/ratelimit refuses the
// file. Read as no value, it would make a limit meant for user = alice
// limit every user; it is refused here too, wherever a field may be null.
func TestANullTaggedTextIsRefused(t *testing.T) {
	for _, file := range []string{
		"domain: api\ndescriptors:\n" +
			"  - {key: user, value: !!null alice, rate_limit: {unit: minute, requests_per_unit: 1}}\n",
		"domain: api\ndescriptors:\n" +
			"  - {key: user, rate_limit: !!null alice}\n",
		"domain: api\ndescriptors: !!null alice\n",
		"domain: api\n--- !!null alice\n",
	} {
		if _, err := envoy.LoadRules("rules.yaml", []byte(file)); err == nil || !strings.Contains(err.Error(), `"alice" tagged !!null`) {
			t.Errorf("%q: got %v, want the text tagged !!null refused", file, err)
		}
	}
	const null = "domain: api\ndescriptors:\n" +
		"  - {key: user, value: !!null null, rate_limit: {unit: minute, requests_per_unit: 1}}\n"
	if _, err := envoy.LoadRules("rules.yaml", []byte(null)); err != nil {
		t.Errorf("value: !!null null is no value, as in yaml.v2: %v", err)
	}
}

// envoyproxy/ratelimit reads a unit as
// RateLimitResponse_RateLimit_Unit_value[strings.ToUpper(unit)]
// (config_impl.go): a letter that upper-cases to one of the unit's name is
// that letter (the dotless ı is I, the long ſ is S), and one that only
// case-folds to it is not (the Kelvin sign K is no K).
func TestAUnitIsReadAsItsUpperCase(t *testing.T) {
	for _, c := range []struct {
		unit string
		want time.Duration // 0: refused
	}{
		{"MINUTE", time.Minute},
		{"m\u0131nute", time.Minute},
		{"\u017fecond", time.Second},
		{"wee\u212a", 0},
	} {
		file := "domain: api\ndescriptors:\n  - {key: user, rate_limit: {unit: " + c.unit + ", requests_per_unit: 1}}\n"
		r, err := envoy.LoadRules("rules.yaml", []byte(file))
		switch {
		case c.want == 0 && err == nil:
			t.Errorf("unit %q: loaded %v, want it refused (strings.ToUpper makes it no unit)", c.unit, r.Limits())
		case c.want == 0:
		case err != nil:
			t.Errorf("unit %q: %v, want it read as envoyproxy/ratelimit reads it", c.unit, err)
		case len(r.Limits()) != 1 || r.Limits()[0].Window() != c.want:
			t.Errorf("unit %q: limits %v, want one per %v", c.unit, r.Limits(), c.want)
		}
	}
}
