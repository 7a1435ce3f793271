package yamlcheck_test

import (
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/internal/yamlcheck"
)

// A scalar is mistagged where gopkg.in/yaml.v2 refuses it: written with a
// tag it resolves (!!null, !!bool, !!int, !!float, !!timestamp) and a text
// of another type as it reads YAML 1.1, quoted or not. An integer tagged
// !!float is a float; !!str, !!binary and untagged texts are never
// mistagged.
func TestYAML11Mistagged(t *testing.T) {
	for text, want := range map[string]bool{
		"!!null alice": true, "!!null ~": false, "!!null ''": false, "!!null NULL": false,
		"!!int user": true, "!!int 1_000": false, "!!int 0x1F": false, "!!int 0b101": false, "!!int '5'": false, "!!int 5.5": true,
		"!!bool alice": true, "!!bool yes": false, "!!bool Off": false, "!!bool 1": true,
		"!!float api": true, "!!float 5": false, "!!float .5": false, "!!float .inf": false, "!!float 1e3": false,
		"!!float 18446744073709551615": true, // an integer past int64: yaml.v2 makes no float of it
		"!!timestamp alice":            true, "!!timestamp 2024-01-02": false, "!!timestamp 5": true,
		"!!null <<": true, "!!int ~": true,
		"alice": false, "!!str 5": false, "!!binary YWxpY2U=": false, "'5'": false, "5": false,
	} {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		if is, got := yamlcheck.YAML11Mistagged(doc.Content[0]); got != want {
			t.Errorf("%s: mistagged %v (a %s), want %v", text, got, is, want)
		}
	}
}
