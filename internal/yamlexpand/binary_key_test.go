package yamlexpand_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/internal/yamlexpand"
)

// gopkg.in/yaml.v2 reads a mapping key tagged !!binary as the bytes its
// base64 encodes, written or aliased: !!binary a2V5 is the key "key".
// Expand makes it that text, tagged !!str, so that a reader looking keys
// up by their text finds it; and it refuses a key tagged !!binary that is
// not base64, as yaml.v2 does. !!binary PDw= (<<) is the text <<, not a
// merge key.
func TestABinaryTaggedKeyIsTheTextItEncodes(t *testing.T) {
	src := "a: {&k !!binary a2V5: 1}\nb: {*k : 2}\nc: {!!binary PDw=: 3}\n"
	out, ok := yamlexpand.New(yamlexpand.Options{}).Expand(parse(t, src))
	if !ok {
		t.Fatal("refused")
	}
	for i, want := range []string{"key", "key", "<<"} {
		k := out.Content[2*i+1].Content[0]
		if k.Value != want || k.Tag != "!!str" {
			t.Errorf("%s: key %q tagged %s, want %q tagged !!str", out.Content[2*i].Value, k.Value, k.Tag, want)
		}
	}
	var got string
	if _, ok := yamlexpand.New(yamlexpand.Options{Report: reportTo(&got)}).Expand(parse(t, "a: {!!binary a2V5!: 1}\n")); ok || !strings.Contains(got, "a.a2V5!: a key tagged !!binary, but \"a2V5!\" is not base64") {
		t.Errorf("a key tagged !!binary that is not base64: reported %q, want it refused", got)
	}
}
