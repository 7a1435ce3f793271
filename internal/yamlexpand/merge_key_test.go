package yamlexpand_test

import (
	"testing"

	"github.com/sluice-dev/sluice/internal/yamlexpand"
)

// A merge key is <<, written plain or tagged !!merge, as gopkg.in/yaml.v2
// reads one (decode.go isMerge); a key of other text tagged !!merge is
// that text, and "<<" quoted or tagged !!str is the text <<. Expand merges
// only a merge key and leaves the others keys, as text.
func TestMergeKeyIsOnlyTheTextMerge(t *testing.T) {
	cases := []struct {
		key   string
		merge bool
	}{
		{"<<", true},
		{"!!merge <<", true},
		{`!!merge "<<"`, true},
		{"!!merge foo", false},
		{`"<<"`, false},
		{"'<<'", false},
		{"!!str <<", false},
		{"foo", false},
	}
	for _, c := range cases {
		src := "a: &a {x: 1}\nb: {" + c.key + ": *a, y: 2}\n"
		doc := parse(t, src)
		k := doc.Content[3].Content[0]
		if got := yamlexpand.IsMergeKey(k); got != c.merge {
			t.Errorf("%s: IsMergeKey %v, want %v", c.key, got, c.merge)
		}
		out, ok := yamlexpand.New(yamlexpand.Options{}).Expand(doc)
		if !ok {
			t.Errorf("%s: refused", c.key)
			continue
		}
		b := out.Content[3]
		if merged := b.Content[0].Value == "x"; merged != c.merge {
			t.Errorf("%s: expanded to %q, merged %v, want %v", c.key, encode(t, b), merged, c.merge)
		}
		if !c.merge && b.Content[0].Tag != "!!str" {
			t.Errorf("%s: key tagged %s, want !!str (text)", c.key, b.Content[0].Tag)
		}
	}
}
