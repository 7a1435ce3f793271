package yamlcheck_test

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/internal/yamlcheck"
)

// YAML readers (gopkg.in/yaml.v2 and yaml.v3) decode a list or a mapping
// by its kind, whatever its tag: one tagged !!null is read as written, not
// as nothing. A text tagged !!null is null only if it is a null text
// (empty, ~, null, Null, NULL); another is refused, as those readers
// refuse it ("cannot decode !!str `a` as a !!null").
func TestANullTagMakesOnlyATextNull(t *testing.T) {
	for _, c := range []struct {
		name, yaml string
		want       []string // the list's elements
		err        string
	}{
		{"a list tagged !!null is a list", "l: !!null [a, b]\n", []string{"a", "b"}, ""},
		{"a text tagged !!null of a null text is an empty list", "l: !!null ~\n", nil, ""},
		{"nothing tagged !!null is an empty list", "l: !!null\n", nil, ""},
		{"a text tagged !!null of other text is refused", "l: !!null a\n", nil, `f.yaml:1:4: l: "a" tagged !!null, which is not null`},
		{"a mapping tagged !!null is a mapping", "l: !!null {a: 1}\n", nil, "f.yaml:1:4: l: want a list, got a mapping"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root, err := yamlcheck.Parse("f.yaml", []byte(c.yaml))
			if err != nil {
				t.Fatal(err)
			}
			d := &yamlcheck.Decoder{File: "f.yaml"}
			var got []string
			d.Mapping(root, "", map[string]yamlcheck.Field{"l": func(n *yaml.Node, p string) {
				d.List(n, p, func(_ int, e *yaml.Node, p string) { got = append(got, d.Str(e, p)) })
			}})
			err = d.Err()
			switch {
			case c.err == "" && err != nil:
				t.Fatalf("error %v, want none", err)
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Fatalf("error %v, want one containing %q", err, c.err)
			}
			if strings.Join(got, ",") != strings.Join(c.want, ",") {
				t.Errorf("read %q, want %q", got, c.want)
			}
		})
	}
	root, err := yamlcheck.Parse("f.yaml", []byte("m: !!null {a: x}\n"))
	if err != nil {
		t.Fatal(err)
	}
	d := &yamlcheck.Decoder{File: "f.yaml"}
	var a string
	d.Mapping(root, "", map[string]yamlcheck.Field{"m": func(n *yaml.Node, p string) {
		d.Mapping(n, p, map[string]yamlcheck.Field{"a": func(n *yaml.Node, p string) { a = d.Str(n, p) }})
	}})
	if err := d.Err(); err != nil || a != "x" {
		t.Errorf("m: !!null {a: x}: read a = %q, %v; want the mapping read, a = x", a, err)
	}
}

// A second document that is a mapping tagged !!null is a document, refused
// as any second one is, not an empty one left unread.
func TestASecondDocumentTaggedNullIsRefused(t *testing.T) {
	for _, src := range []string{"a: 1\n--- !!null\nb: 2\n", "a: 1\n--- !!null b\n"} {
		if _, err := yamlcheck.Parse("f.yaml", []byte(src)); err == nil || !strings.Contains(err.Error(), "a second YAML document") {
			t.Errorf("%q: error %v, want a second YAML document refused", src, err)
		}
	}
}
