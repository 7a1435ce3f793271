package yamlexpand_test

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/internal/yamlexpand"
)

// A scalar written with the non-specific tag `!` is a text to
// gopkg.in/yaml.v2, which yaml.v3 forgets: MarkNonSpecific tags it !!str,
// in block and flow style, plain or quoted, key or value, after an anchor
// or before one, and a `!`-tagged << a merge key, as yaml.v2 reads it. A
// `!` in a quoted text or a comment, another tag, and a document after the
// first are read where they are written.
func TestNonSpecificTagIsAText(t *testing.T) {
	const src = "a: ! ~\n" +
		"b: {c: ! 1, ! d: x, e: !<!> true}\n" +
		"f: [&g ! null, ! &h 2, ! \"q\", \"! r\", s] # ! t\n" +
		"i: !\n" +
		"j: !!int 3\n" +
		"k: { ! \"<<\": {l: m} }\n" +
		"---\n" +
		"n: ! ~\n" +
		"é: ! ~\n"
	dec := yaml.NewDecoder(strings.NewReader(src))
	var first, second yaml.Node
	if err := dec.Decode(&first); err != nil {
		t.Fatal(err)
	}
	if err := dec.Decode(&second); err != nil {
		t.Fatal(err)
	}
	text := yamlexpand.NewSource([]byte(src))
	yamlexpand.MarkNonSpecific(text, &first)
	yamlexpand.MarkNonSpecific(text, &second)
	tags := map[string]string{}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.ScalarNode {
			tag := n.Tag
			if n.Style&yaml.TaggedStyle != 0 {
				tag += " tagged"
			}
			tags[n.Value] += tag
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&first)
	walk(&second)
	for value, want := range map[string]string{
		"~":    "!!str tagged!!str tagged!!str tagged", // a, n and é
		"1":    "!!str tagged",
		"d":    "!!str tagged",
		"true": "!!str tagged",
		"null": "!!str tagged",
		"2":    "!!str tagged",
		"q":    "!!str tagged",
		"! r":  "!!str",
		"s":    "!!str",
		"":     "!!str tagged",
		"3":    "!!int tagged",
		"<<":   "!!merge",
		"l":    "!!str",
	} {
		if got := tags[value]; got != want {
			t.Errorf("%q: %s, want %s", value, got, want)
		}
	}
}

// An empty value takes no `!` of the node after it: yaml.v3 places an
// explicit key's missing value at the next key (`? a` then `! b: 1`), and
// an empty value's anchor may end its line (`a: &s` then `! b: 1`). Such a
// value stays null, as yaml.v2 reads it, and the next key is the text. A
// `!` that is the empty value's own, on the next line (`a: &s` then `  !`)
// or alone before its `:` (`! : y`), makes it the text "", as in yaml.v2.
func TestAnEmptyValueTakesNoTagOfTheNextNode(t *testing.T) {
	// Each key and value of the mapping, as value:tag, + if TaggedStyle.
	for src, want := range map[string]string{
		"a: &s\n! b: 1\n":       "a:!!str :!!null b:!!str+ 1:!!int",
		"? a\n! b: 1\n":         "a:!!str :!!null b:!!str+ 1:!!int",
		"a: &s\n  !\nb: 1\n":    "a:!!str :!!str+ b:!!str 1:!!int",
		"? a\n! : y\n":          "a:!!str :!!null :!!str+ y:!!str",
		"a: &s # c\n  ! x\n":    "a:!!str x:!!str+",
		"a: &s\n&t ! b: 1\n":    "a:!!str :!!null b:!!str+ 1:!!int",
		"{a: &s , ! b: 1}\n":    "a:!!str :!!null b:!!str+ 1:!!int",
		"a: !\u2028  ~\nb: 1\n": "a:!!str ~:!!str+ b:!!str 1:!!int",
	} {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		yamlexpand.MarkNonSpecific(yamlexpand.NewSource([]byte(src)), &doc)
		var got []string
		for _, n := range doc.Content[0].Content {
			s := n.Value + ":" + n.ShortTag()
			if n.Style&yaml.TaggedStyle != 0 {
				s += "+"
			}
			got = append(got, s)
		}
		if g := strings.Join(got, " "); g != want {
			t.Errorf("%q: %s, want %s", src, g, want)
		}
	}
}
