package envoy_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/envoy"
)

// One test per error class: each message names file:line:col and the path.
func TestRulesErrorsNameTheirPlace(t *testing.T) {
	head := "domain: edge\ndescriptors:\n  - key: ip\n"
	rl := func(lines string) string { return head + "    rate_limit:\n" + lines }
	cases := []struct{ name, yaml, want string }{
		{"YAML syntax", "domain: [edge\n", `bad.yaml:1:1: YAML syntax: did not find expected ',' or ']'`},
		{"empty file", "", `bad.yaml: no domain (see examples/envoy/ratelimit-config.yaml)`},
		{"not a mapping", "- edge\n", `bad.yaml:1:1: want a mapping, got a list`},
		{"unknown top-level field", "domain: edge\ndomains: []\n",
			`bad.yaml:2:1: domains: unknown field (known: descriptors, domain)`},
		{"missing domain", "descriptors: []\n", `bad.yaml:1:1: domain: missing`},
		{"empty domain", "domain: \"\"\n", `bad.yaml:1:9: domain: must not be empty`},
		{"duplicate domain", "domain: edge\n---\ndomain: edge\n", `bad.yaml:3:9: domain: "edge" is already defined at bad.yaml:1`},
		{"descriptors not a list", "domain: edge\ndescriptors: {key: ip}\n", `bad.yaml:2:14: descriptors: want a list, got a mapping`},
		{"unknown descriptor field", head + "    valu: x\n",
			`bad.yaml:4:5: descriptors[0].valu: unknown field (known: descriptors, detailed_metric, key, quota_mode, rate_limit, shadow_mode, share_threshold, value, value_to_metric)`},
		{"field set twice", head + "    key: ip2\n", `bad.yaml:4:5: descriptors[0].key: set twice`},
		{"missing key", "domain: edge\ndescriptors:\n  - value: x\n", `bad.yaml:3:5: descriptors[0].key: missing`},
		{"key of the wrong type", "domain: edge\ndescriptors:\n  - key: [ip]\n", `bad.yaml:3:10: descriptors[0].key: want a string, got a list`},
		{"duplicate sibling", head + "  - key: ip\n", `bad.yaml:4:10: descriptors[1].key: key ip is already a descriptor of this list (line 3)`},
		{"unknown rate_limit field", rl("      unit: second\n      requests_per_unit: 1\n      rate: 5\n"),
			`bad.yaml:7:7: descriptors[0].rate_limit.rate: unknown field (known: algorithm, burst, max_wait, name, replaces, requests_per_unit, unit, unlimited)`},
		{"missing unit", rl("      requests_per_unit: 1\n"),
			`bad.yaml:5:7: descriptors[0].rate_limit.unit: missing (one of second, minute, hour, day, week, month, year)`},
		{"bad unit", rl("      unit: fortnight\n      requests_per_unit: 1\n"),
			`bad.yaml:5:13: descriptors[0].rate_limit.unit: "fortnight" is not one of second, minute, hour, day, week, month, year`},
		{"missing requests_per_unit", rl("      unit: second\n"), `bad.yaml:5:7: descriptors[0].rate_limit.requests_per_unit: missing`},
		{"negative requests_per_unit", rl("      unit: second\n      requests_per_unit: -1\n"),
			`bad.yaml:6:26: descriptors[0].rate_limit.requests_per_unit: -1 is out of range [0, 4294967295]`},
		{"requests_per_unit not a number", rl("      unit: second\n      requests_per_unit: lots\n"),
			`bad.yaml:6:26: descriptors[0].rate_limit.requests_per_unit: "lots" is not an integer`},
		{"unlimited with a unit", rl("      unlimited: true\n      unit: second\n"),
			`bad.yaml:6:13: descriptors[0].rate_limit.unit: has no effect on an unlimited rule (remove it or unlimited)`},
		{"unlimited not a bool", rl("      unlimited: \"yes\"\n"),
			`bad.yaml:5:18: descriptors[0].rate_limit.unlimited: want true or false, got "yes"`},
		{"shadow_mode without rate_limit", head + "    shadow_mode: true\n",
			`bad.yaml:4:18: descriptors[0].shadow_mode: has no effect without a rate_limit`},
		{"replaces without name", rl("      unit: second\n      requests_per_unit: 1\n      replaces: [{}]\n"),
			`bad.yaml:7:18: descriptors[0].rate_limit.replaces[0].name: must name the limit to replace`},
		{"replaces itself", rl("      name: a\n      unit: second\n      requests_per_unit: 1\n      replaces: [{name: a}]\n"),
			`bad.yaml:8:25: descriptors[0].rate_limit.replaces[0].name: a limit cannot replace itself`},
		{"unknown algorithm", rl("      unit: second\n      requests_per_unit: 1\n      algorithm: magic\n"),
			`bad.yaml:7:18: descriptors[0].rate_limit.algorithm: unknown algorithm "magic" (use fixed-window, `},
		{"concurrency", rl("      unit: second\n      requests_per_unit: 1\n      algorithm: concurrency\n"),
			`bad.yaml:7:18: descriptors[0].rate_limit.algorithm: concurrency limits work in flight and needs a release when a request ends, which Envoy's rate limit protocol never sends: use a rate algorithm`},
		{"burst on a window", rl("      unit: second\n      requests_per_unit: 1\n      burst: 5\n"),
			`bad.yaml:7:14: descriptors[0].rate_limit.burst: applies only to token-bucket, leaky-bucket and gcra, not fixed-window`},
		{"max_wait on a token bucket", rl("      unit: second\n      requests_per_unit: 1\n      algorithm: token-bucket\n      max_wait: 1s\n"),
			`bad.yaml:8:17: descriptors[0].rate_limit.max_wait: applies only to leaky-bucket (as a queue), not token-bucket`},
		{"bad max_wait", rl("      unit: second\n      requests_per_unit: 1\n      algorithm: leaky-bucket\n      max_wait: soon\n"),
			`bad.yaml:8:17: descriptors[0].rate_limit.max_wait: "soon" is not a duration (use e.g. 250ms, 2s)`},
		{"algorithm on a block rule", rl("      unit: second\n      requests_per_unit: 0\n      algorithm: gcra\n"),
			`bad.yaml:7:18: descriptors[0].rate_limit.algorithm: has no effect when requests_per_unit is 0 (every request is refused)`},
		{"a limit sluice cannot keep exact", rl("      unit: year\n      requests_per_unit: 4294967295\n      algorithm: gcra\n      burst: 1099511627776\n"),
			`bad.yaml:5:7: descriptors[0].rate_limit: invalid limit: ip: 4294967295 per 8760h0m0s with burst 1099511627776 cannot be kept exact`},
		{"nested errors keep their path", head + "    descriptors:\n      - key: path\n        rate_limit: {unit: sec, requests_per_unit: 1}\n",
			`bad.yaml:6:28: descriptors[0].descriptors[0].rate_limit.unit: "sec" is not one of`},
		{"an alias", "domain: edge\ndescriptors: &d []\nx: *d\n", `bad.yaml:3:1: x: unknown field`},
		{"a control character", "domain: edge\ndescriptors:\n  - key: a\x01\n", `bad.yaml:3:11: YAML syntax: control characters are not allowed (U+0001`},
		{"an alias of no anchor", "domain: edge\ndescriptors:\n  - key: a\n    value: *v\n", `bad.yaml:4:12: YAML syntax: unknown anchor 'v' referenced`},
	}
	for _, c := range cases {
		_, err := envoy.LoadRules("bad.yaml", []byte(c.yaml))
		if err == nil {
			t.Errorf("%s: loaded", c.name)
			continue
		}
		if !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s:\n got %v\nwant %s", c.name, err, c.want)
		}
		if len(envoy.Errors(err)) == 0 {
			t.Errorf("%s: %T is not an *envoy.Error", c.name, err)
		}
	}
}

func TestAllErrorsAreReportedAtOnce(t *testing.T) {
	_, err := envoy.LoadRules("bad.yaml", []byte(`
domain: edge
descriptors:
  - key: a
    rate_limit: {unit: fortnight, requests_per_unit: 1}
  - key: b
    rate_limit: {unit: second, requests_per_unit: 1, colour: red}
`))
	if n := len(envoy.Errors(err)); n != 2 {
		t.Errorf("%d errors, want 2: %v", n, err)
	}
}

func TestExampleRulesLoad(t *testing.T) {
	rules, err := envoy.LoadRuleFiles("../examples/envoy/ratelimit-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := rules.Domains(); !slices.Equal(got, []string{"edge", "internal"}) {
		t.Fatalf("domains %v", got)
	}
	h := serve(t, string(must(os.ReadFile("../examples/envoy/ratelimit-config.yaml"))))
	ip, login := desc("remote_address", "203.0.113.7"), desc("remote_address", "203.0.113.7", "path", "/login")
	h.expect(h.ask(request("edge", 0, ip, login)), ok,
		// A sliding counter is full again once the unit's weight rounds down to 0.
		status{ok, "per-ip:100/MINUTE", 99, time.Minute + time.Microsecond}, status{ok, "login:5/MINUTE", 4, time.Minute})
	h.expect(h.ask(request("edge", 0, desc("remote_address", "198.51.100.66"))), over, status{over, ":0/SECOND", 0, time.Second})
	h.expect(h.ask(request("edge", 0, desc("remote_address", "203.0.113.7", "path", "/static/app.js"))), ok,
		status{ok, "", 4294967295, 0})
	h.expect(h.ask(request("edge", 0, desc("api_key", "k"), desc("api_key", "k", "plan", "enterprise"))), ok,
		status{code: ok}, status{ok, "enterprise:500/SECOND", 999, 2 * time.Millisecond})
	h.expect(h.ask(request("internal", 0, desc("generic_key", "reports"))), ok, status{ok, ":1000/DAY", 999, 24 * time.Hour})
}

func TestLoadRuleFilesMergesFilesAndRefusesDuplicateDomains(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("a.yaml", "domain: a\n")
	write("b.yml", "domain: b\n")
	write("c.conf", "domain: c\n")
	rules, err := envoy.LoadRuleFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := rules.Domains(); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("domains %v", got)
	}
	dup := write("d.yaml", "\n\ndomain: a\n")
	_, err = envoy.LoadRuleFiles(dir)
	want := dup + `:3:9: domain: "a" is already defined at ` + filepath.Join(dir, "a.yaml") + ":1"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	if _, err := envoy.LoadRuleFiles(filepath.Join(dir, "missing.yaml")); err == nil {
		t.Error("a missing file loaded")
	}
	if _, err := envoy.LoadRuleFiles(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no rules file") {
		t.Errorf("empty directory: %v", err)
	}
}

func TestLongDerivedNamesStayValid(t *testing.T) {
	long := strings.Repeat("segment", 20)
	h := serve(t, "domain: d\ndescriptors:\n  - key: "+long+"\n    rate_limit: {unit: second, requests_per_unit: 1}\n")
	h.ask(request("d", 0, desc(long, "x")))
	name := h.store.checks[0][0].Limit.Name()
	if len(name) != 64 || !strings.HasPrefix(name, long[:55]+"-") {
		t.Errorf("derived name %q", name)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// envoyproxy/ratelimit reads its rules with gopkg.in/yaml.v2, which
// expands anchors, aliases and merge keys: rules written with them load
// unchanged, and limit what they would there.
func TestAnchorsAliasesAndMergeKeysLoadAsRatelimitReadsThem(t *testing.T) {
	h := serve(t, `
domain: api
descriptors:
  - key: a
    rate_limit: &std {name: std, unit: minute, requests_per_unit: 5}
  - key: b
    descriptors: &nested
      - key: path
        rate_limit: {unit: hour, requests_per_unit: 7}
  - key: c
    descriptors: *nested
  - key: d
    rate_limit:
      <<: *std
      name: more
      requests_per_unit: 6
  - key: e
    rate_limit:
      <<: [{unit: second, name: first}, *std]
`)
	h.expect(h.ask(request("api", 0, desc("a", "1"), desc("b", "1", "path", "/"), desc("c", "1", "path", "/"),
		desc("d", "1"), desc("e", "1"))), ok,
		status{ok, "std:5/MINUTE", 4, time.Minute},
		status{ok, ":7/HOUR", 6, time.Hour},
		status{ok, ":7/HOUR", 6, time.Hour},
		status{ok, "more:6/MINUTE", 5, time.Minute},
		status{ok, "first:5/SECOND", 4, time.Second})
}

func TestAliasProblemsNameTheirPlace(t *testing.T) {
	laughs := "domain: api\nl0: &l0 [k, k, k, k, k, k, k, k, k, k]\n"
	for i := 1; i < 10; i++ {
		laughs += fmt.Sprintf("l%d: &l%d [*l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d]\n", i, i,
			i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	cases := []struct{ name, yaml, want string }{
		{"a key written before a merge key that sets it too", `
domain: api
descriptors:
  - key: a
    rate_limit: &std {unit: minute, requests_per_unit: 5}
  - key: b
    rate_limit:
      requests_per_unit: 6
      <<: *std
`, "bad.yaml:8:7: descriptors[1].rate_limit.requests_per_unit: set before the merge key on line 9, which sets it too"},
		{"a merge key of a scalar", "domain: api\nx: &x 1\ndescriptors:\n  - key: a\n    <<: *x\n",
			"bad.yaml:5:9: descriptors[0].<<: want a mapping (or a list of mappings) to merge, got \"1\""},
		{"aliases of aliases", laughs, "bad.yaml:5:50: l3[8]: the document's aliases and merge keys copy more than 12177 values by here"},
	}
	for _, c := range cases {
		_, err := envoy.LoadRules("bad.yaml", []byte(c.yaml))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s:\n got %v\nwant %s", c.name, err, c.want)
		}
	}
}

// envoyproxy/ratelimit reads its rules with gopkg.in/yaml.v2, a YAML 1.1
// reader: yes, on, True and the like are booleans there, and so here.
func TestYAML11BooleansLoadAsRatelimitReadsThem(t *testing.T) {
	for _, c := range []struct {
		spelling string
		shadow   bool
	}{
		{"true", true}, {"True", true}, {"TRUE", true}, {"yes", true}, {"Yes", true}, {"on", true}, {"ON", true}, {"y", true},
		{"false", false}, {"False", false}, {"NO", false}, {"off", false}, {"Off", false}, {"n", false},
	} {
		h := serve(t, `
domain: api
descriptors:
  - key: a
    shadow_mode: `+c.spelling+`
    detailed_metric: `+c.spelling+`
    rate_limit: {unit: minute, requests_per_unit: 0}
`)
		want := status{over, ":0/MINUTE", 0, time.Minute}
		if c.shadow {
			want.code = ok
		}
		h.expect(h.ask(request("api", 0, desc("a", "1"))), want.code, want)
	}
	// A null is false (TestANullBooleanIsFalseAsInRatelimit); a quoted
	// text or another word is no boolean there.
	for _, spelling := range []string{`"true"`, `'yes'`, "1", "maybe"} {
		_, err := envoy.LoadRules("bad.yaml", []byte("domain: api\ndescriptors:\n  - key: a\n    shadow_mode: "+spelling+
			"\n    rate_limit: {unit: minute, requests_per_unit: 1}\n"))
		if err == nil || !strings.HasPrefix(err.Error(), "bad.yaml:4:18: descriptors[0].shadow_mode: want true or false, got ") {
			t.Errorf("shadow_mode: %s: %v, want it refused", spelling, err)
		}
	}
}

// A key written as an alias (*name :) is its anchor's value, as
// envoyproxy/ratelimit's yaml.v2 reads it; a problem with such a key is
// reported at the alias, where it is written, not at the anchor, and an
// alias of a mapping or a list, which names no field, is refused there.
func TestAliasKeysAreReadAtTheirPlace(t *testing.T) {
	const lim = "    rate_limit: {unit: minute, requests_per_unit: 5}\n"
	if _, err := envoy.LoadRules("ok.yaml", []byte("domain: api\ndescriptors:\n  - &k key: a\n"+lim+"  - *k : b\n"+lim)); err != nil {
		t.Errorf("an alias of a field's name: %v", err)
	}
	for _, c := range []struct{ name, yaml, want string }{
		{"an alias of a value that names no field",
			"domain: api\ndescriptors:\n  - key: &key a\n" + lim + "  - *key : b\n" + lim,
			"bad.yaml:5:5: descriptors[1].a: unknown field"},
		{"an alias of a mapping",
			"domain: api\ndescriptors:\n  - key: a\n    rate_limit: &m {unit: minute, requests_per_unit: 5}\n  - key: b\n    *m : 1\n",
			"bad.yaml:6:5: descriptors[1].*m: a key written as an alias of a mapping, which names no field"},
	} {
		_, err := envoy.LoadRules("bad.yaml", []byte(c.yaml))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s:\n got %v\nwant %s", c.name, err, c.want)
		}
	}
}
