package envoy_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/envoy"
)

// yaml.v2, which envoyproxy/ratelimit reads its rules with, decodes a text
// tagged !!binary into a string field as the bytes its base64 encodes:
// `value: !!binary YWxpY2U=` limits user = alice there, not the base64
// text, and so it does here.
func TestLoadRulesBinaryTaggedValueIsTheBytesItEncodes(t *testing.T) {
	const file = "domain: api\ndescriptors:\n" +
		"  - {key: !!binary dXNlcg==, value: !!binary YWxpY2U=, rate_limit: {unit: minute, requests_per_unit: 1}}\n"
	h := serve(t, file)
	h.ask(request("api", 1, desc("user", "alice")))
	if resp := h.ask(request("api", 1, desc("user", "alice"))); resp.OverallCode != over {
		t.Errorf("user = alice, the value yaml.v2 reads, twice within a minute under a limit of 1: %v, want OVER_LIMIT", resp.OverallCode)
	}
	h.ask(request("api", 1, desc("user", "YWxpY2U=")))
	if resp := h.ask(request("api", 1, desc("user", "YWxpY2U="))); resp.OverallCode != ok {
		t.Errorf("user = YWxpY2U=, the base64 text, is limited (%v): envoyproxy/ratelimit does not limit it", resp.OverallCode)
	}
}

// A rule's name tagged !!binary is the name it encodes, line breaks in
// the base64 ignored, as in yaml.v2.
func TestLoadRulesBinaryTaggedNameIsTheNameItEncodes(t *testing.T) {
	const file = "domain: api\ndescriptors:\n" +
		"  - key: user\n" +
		"    rate_limit:\n" +
		"      unit: minute\n" +
		"      requests_per_unit: 1\n" +
		"      name: !!binary |\n" +
		"        cGVyX3\n" +
		"        VzZXI=\n"
	r, err := envoy.LoadRules("rules.yaml", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Limits(); len(got) != 1 || got[0].Name() != "per_user" {
		t.Errorf("limits %v, want one named per_user", got)
	}
}

// A text tagged !!binary that is not base64 is refused where it is
// written, as yaml.v2 refuses it.
func TestLoadRulesBinaryTaggedTextNotBase64IsRefused(t *testing.T) {
	const file = "domain: api\ndescriptors:\n" +
		"  - {key: user, value: !!binary not base64, rate_limit: {unit: minute, requests_per_unit: 1}}\n"
	_, err := envoy.LoadRules("rules.yaml", []byte(file))
	const want = `rules.yaml:3:24: descriptors[0].value: tagged !!binary, but "not base64" is not base64`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want %s…", err, want)
	}
}
