package envoy_test

import (
	"fmt"
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

// The non-specific tag `!` makes a scalar a text, in YAML 1.1 and 1.2
// alike, and gopkg.in/yaml.v2 (envoyproxy/ratelimit) reads it so: `value:
// ! ~` is the value "~" there, not no value, `domain: ! ~` the domain "~",
// and `requests_per_unit: ! 1` / `shadow_mode: ! true` are texts that
// yaml.v2 refuses to decode into uint32 / bool ("cannot unmarshal ! `1`
// into uint32"). yaml.v3 drops the `!`; the service reads the file as
// yaml.v2 does, in flow style, quoted, as a key or after an anchor, and a
// `!` in a quoted text or a comment is no tag.
func TestANonSpecificTagMakesAText(t *testing.T) {
	limits := func(file string) string {
		t.Helper()
		r, err := envoy.LoadRules("rules.yaml", []byte(file))
		if err != nil {
			t.Fatalf("%v\n%s", err, file)
		}
		return fmt.Sprint(r.Limits())
	}
	const rl = "rate_limit: {unit: minute, requests_per_unit: 1}"
	for _, c := range []struct{ value, as string }{
		{"! ~", `"~"`},
		{"! null", `"null"`},
		{"! \"x\"", "x"},
		{"&v ! ~", `"~"`},
		{"! &v ~", `"~"`},
		{"\"a ! b\"", "a ! b"},
	} {
		file := "domain: api\ndescriptors:\n  - key: user\n    value: %s\n    " + rl + "\n"
		if got, want := limits(fmt.Sprintf(file, c.value)), limits(fmt.Sprintf(file, c.as)); got != want {
			t.Errorf("value: %s is %s to yaml.v2; the service reads %s, want %s", c.value, c.as, got, want)
		}
		flow := "domain: api\ndescriptors:\n  - {key: user, value: %s, " + rl + "}\n"
		if got, want := limits(fmt.Sprintf(flow, c.value)), limits(fmt.Sprintf(flow, c.as)); got != want {
			t.Errorf("{value: %s} is %s to yaml.v2; the service reads %s, want %s", c.value, c.as, got, want)
		}
	}
	if got, want := limits("domain: api\ndescriptors:\n  - key: user # ! x\n    value: ~ # ! x\n    "+rl+"\n"), limits("domain: api\ndescriptors:\n  - {key: user, "+rl+"}\n"); got != want {
		t.Errorf("value: ~ # ! x is no value to yaml.v2; the service reads %s, want %s", got, want)
	}
	if got, want := limits("domain: api\ndescriptors:\n  - ! key: user\n    "+rl+"\n"), limits("domain: api\ndescriptors:\n  - key: user\n    "+rl+"\n"); got != want {
		t.Errorf("! key: user is the field key to yaml.v2; the service reads %s, want %s", got, want)
	}
	if _, err := envoy.LoadRules("rules.yaml", []byte("domain: ! ~\ndescriptors:\n  - {key: user, "+rl+"}\n")); err != nil {
		t.Errorf("domain: ! ~ is the domain \"~\" to yaml.v2 (envoyproxy/ratelimit loads it); the service refuses it: %v", err)
	}
	for name, file := range map[string]string{
		"requests_per_unit: ! 1": "domain: api\ndescriptors:\n  - key: user\n    rate_limit: {unit: minute, requests_per_unit: ! 1}\n",
		"shadow_mode: ! true":    "domain: api\ndescriptors:\n  - key: user\n    shadow_mode: ! true\n    " + rl + "\n",
	} {
		if r, err := envoy.LoadRules("rules.yaml", []byte(file)); err == nil {
			t.Errorf("%s: a text to yaml.v2, which refuses the file (cannot unmarshal ! into uint32/bool); the service loads %v", name, r.Limits())
		}
	}
}

// An empty value, written with its anchor alone (`descriptors: &d`) or as
// an explicit key without a value (`? descriptors`), before a key tagged
// `!` on the next line: the `!` is that key's, and the empty value is null
// to yaml.v2 (envoyproxy/ratelimit), no nested descriptors. yaml.v3 places
// the explicit key's empty value at the next key's `!`, and an empty
// value's properties may go on past a line break: the service reads the
// `!` as the next key's, and loads the file as yaml.v2 does, rather than
// take the empty value for the text "" ("want a list, got \"\"").
func TestAnEmptyValueBeforeABangTaggedKeyIsNull(t *testing.T) {
	const head = "domain: api\ndescriptors:\n  - key: user\n    rate_limit: {unit: minute, requests_per_unit: 1}\n"
	for name, src := range map[string]string{
		"anchored empty value": head + "    descriptors: &d\n    ! value: alice\n",
		"explicit key":         head + "    ? descriptors\n    ! value: alice\n",
	} {
		r, err := envoy.LoadRules("rules.yaml", []byte(src))
		if err != nil {
			t.Errorf("%s: the service refuses a file yaml.v2 reads with descriptors null: %v\n%s", name, err, src)
			continue
		}
		if got := fmt.Sprint(r.Limits()); got != "[user_alice: fixed-window 1 per 1m0s]" {
			t.Errorf("%s: the service reads %s, want the limit of user alice", name, got)
		}
	}
}

// The tag `!` ends at any line break the parser knows, NEL (U+0085), LS
// (U+2028) and PS (U+2029) among them (libyaml's is_blankz, in yaml.v2 and
// yaml.v3 alike): `value: !<LS>  ~` is the text "~" to yaml.v2, and so to
// the service, not no value (a rule for every user).
func TestANonSpecificTagEndsAtAUnicodeLineBreak(t *testing.T) {
	const head = "domain: api\ndescriptors:\n  - key: user\n    rate_limit: {unit: minute, requests_per_unit: 1}\n"
	want, err := envoy.LoadRules("rules.yaml", []byte(head+"    value: \"~\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	for name, br := range map[string]string{"NEL": "\u0085", "LS": "\u2028", "PS": "\u2029"} {
		got, err := envoy.LoadRules("rules.yaml", []byte(head+"    value: !"+br+"      ~\n"))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if g, w := fmt.Sprint(got.Limits()), fmt.Sprint(want.Limits()); g != w {
			t.Errorf("value: !<%s> ~: the service reads %s, want %s (the value \"~\", as yaml.v2 reads it)", name, g, w)
		}
	}
}
