package envoy_test

import (
	"fmt"
	"testing"
	"unicode/utf16"

	"github.com/sluice-dev/sluice/envoy"
)

// A YAML stream may be UTF-16 with a byte order mark (YAML 1.1 and 1.2
// §5.2); gopkg.in/yaml.v2, and so envoyproxy/ratelimit, reads such a file
// as its UTF-8 text, and so does the service (value: "~" loads the same in
// either). MarkNonSpecific reads a UTF-16 file's `!` as the parser reads
// its text, so `value: ! ~` limits only the value "~" there too, not every
// user (docs/envoy.md: "`value: ! ~` is the value `~` (not no value)").
func TestANonSpecificTagInAUTF16FileIsAText(t *testing.T) {
	utf16le := func(s string) []byte {
		b := []byte{0xFF, 0xFE}
		for _, r := range utf16.Encode([]rune(s)) {
			b = append(b, byte(r), byte(r>>8))
		}
		return b
	}
	const file = "domain: api\ndescriptors:\n  - key: user\n    value: ! ~\n    rate_limit: {unit: minute, requests_per_unit: 1}\n"
	want, err := envoy.LoadRules("rules.yaml", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	got, err := envoy.LoadRules("rules.yaml", utf16le(file))
	if err != nil {
		t.Fatalf("the UTF-16 file: %v", err)
	}
	if g, w := fmt.Sprint(got.Limits()), fmt.Sprint(want.Limits()); g != w {
		t.Errorf("value: ! ~ in UTF-16: the service reads %s, want %s (the value \"~\", as yaml.v2 and the same file in UTF-8)", g, w)
	}
}
