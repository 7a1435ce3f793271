package yamlcheck

import (
	"testing"

	"go.yaml.in/yaml/v3"
)

// A file is read as written: an alias written as a key (*k) is an error,
// as aliases are wherever a value is read. In YAML the mapping below is
// {window: 1m, "1m": 5}; read by the alias's name it was {window: 1m,
// quantity: 5}, with no error.
func TestAnAliasAsAKeyIsAnError(t *testing.T) {
	root, err := Parse("f.yaml", []byte("window: &quantity 1m\n*quantity : 5\n"))
	if err != nil {
		t.Fatal(err)
	}
	d := &Decoder{File: "f.yaml"}
	got := map[string]string{}
	field := func(name string) Field {
		return func(n *yaml.Node, _ string) { got[name] = d.Str(n, name) }
	}
	d.Mapping(root, "", map[string]Field{"window": field("window"), "quantity": field("quantity")})
	if d.Err() == nil {
		t.Errorf("an alias as a key read without error: %v (in YAML the second key is %q, the anchored value)", got, "1m")
	}
}
