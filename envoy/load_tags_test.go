package envoy_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/envoy"
)

// gopkg.in/yaml.v2 (envoyproxy/ratelimit's YAML library) resolves a scalar
// tagged !!null, !!int, !!bool, !!float or !!timestamp, and refuses one
// whose text is not of that type ("cannot decode !!str `alice` as a
// !!null"), whether the scalar is a key or a value: the service refuses
// the file too, rather than enforce rules envoyproxy/ratelimit refuses to
// load. A text of the type it is tagged with is read as its text, and an
// integer tagged !!float is a float to yaml.v2.
func TestATextTaggedAsWhatItIsNotIsRefused(t *testing.T) {
	const rl = "rate_limit: {unit: minute, requests_per_unit: 1}"
	for name, file := range map[string]string{
		"key tagged !!null":        "domain: api\ndescriptors:\n  - {key: user, !!null value: alice, " + rl + "}\n",
		"key tagged !!int":         "domain: api\ndescriptors:\n  - {!!int key: user, " + rl + "}\n",
		"key tagged !!bool":        "domain: api\ndescriptors:\n  - {key: user, !!bool value: alice, " + rl + "}\n",
		"value tagged !!int":       "domain: api\ndescriptors:\n  - {key: !!int user, " + rl + "}\n",
		"value tagged !!bool":      "domain: api\ndescriptors:\n  - {key: user, value: !!bool alice, " + rl + "}\n",
		"value tagged !!float":     "domain: !!float api\ndescriptors:\n  - {key: user, " + rl + "}\n",
		"unit tagged !!int":        "domain: api\ndescriptors:\n  - {key: user, rate_limit: {unit: !!int minute, requests_per_unit: 1}}\n",
		"value tagged !!timestamp": "domain: api\ndescriptors:\n  - {key: user, value: !!timestamp alice, " + rl + "}\n",
		"quoted, tagged !!int":     "domain: api\ndescriptors:\n  - {key: user, value: !!int \"alice\", " + rl + "}\n",
	} {
		r, err := envoy.LoadRules("rules.yaml", []byte(file))
		if err == nil {
			t.Errorf("%s: yaml.v2 refuses the file (cannot decode !!str as the tag); sluice loads %d limits:\n%s", name, len(r.Limits()), file)
		} else if !strings.Contains(err.Error(), "remove the tag") {
			t.Errorf("%s: %v, want the tag named as the problem", name, err)
		}
	}
	for name, value := range map[string]string{
		"!!int":       "!!int 5",
		"!!float":     "!!float 5",
		"!!bool":      "!!bool yes",
		"!!timestamp": "!!timestamp 2024-01-02",
		"!!str":       "!!str 5",
	} {
		file := "domain: api\ndescriptors:\n  - {key: user, value: " + value + ", " + rl + "}\n"
		if _, err := envoy.LoadRules("rules.yaml", []byte(file)); err != nil {
			t.Errorf("a text tagged %s of its type: yaml.v2 reads it; sluice refuses it: %v", name, err)
		}
	}
}

// A mapping key tagged !!binary is the field it encodes (docs/envoy.md),
// and a problem the alias expansion finds under such a key names that
// field, as the decoder's own problems do: the field rate_limit, not the
// key's base64 text cmF0ZV9saW1pdA==.
func TestAnExpansionErrorUnderABinaryKeyNamesTheField(t *testing.T) {
	const file = "domain: api\ndescriptors:\n  - &l key: a\n    !!binary cmF0ZV9saW1pdA==:\n      <<: *l\n"
	_, err := envoy.LoadRules("rules.yaml", []byte(file))
	if err == nil {
		t.Fatal("a merge key naming a text is accepted")
	}
	const want = "rules.yaml:5:11: descriptors[0].rate_limit.<<:"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("got %v\nwant the problem at %s (the field the key encodes)", err, want)
	}
}
