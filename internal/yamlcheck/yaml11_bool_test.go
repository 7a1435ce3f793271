package yamlcheck_test

import (
	"testing"

	"github.com/sluice-dev/sluice/internal/yamlcheck"
)

// YAML11Bool reads a boolean as gopkg.in/yaml.v2 does: YAML 1.1's
// spellings, plain or tagged !!bool (quoted or not); any other quoted or
// tagged scalar is a string.
func TestYAML11BoolReadsPlainAndTaggedBooleans(t *testing.T) {
	for _, c := range []struct {
		value    string
		want, ok bool
	}{
		{"yes", true, true}, {"On", true, true}, {"TRUE", true, true}, {"n", false, true}, {"Off", false, true},
		{"!!bool true", true, true}, {"!!bool yes", true, true}, {`!!bool "off"`, false, true},
		{`"true"`, false, false}, {"!!str true", false, false}, {"!!bool maybe", false, false}, {"1", false, false}, {"[true]", false, false},
	} {
		n, err := yamlcheck.Parse("f.yaml", []byte("b: "+c.value+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := yamlcheck.YAML11Bool(n.Content[1]); got != c.want || ok != c.ok {
			t.Errorf("%s: %v, %v; want %v, %v", c.value, got, ok, c.want, c.ok)
		}
	}
}
