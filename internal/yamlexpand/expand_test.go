package yamlexpand_test

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/internal/yamlcheck"
	"github.com/sluice-dev/sluice/internal/yamlexpand"
)

func parse(t *testing.T, src string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Content[0]
}

func encode(t *testing.T, n *yaml.Node) string {
	t.Helper()
	out, err := yaml.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// A key that Options.Overlaid names keeps the merged mapping's other keys
// under the later one; any other key's later mapping replaces the merged
// one, as yaml.v2 decodes a struct pointer and a map.
func TestOverlaidKeysKeepTheMergedMappingsOtherKeys(t *testing.T) {
	src := "base: &b {limit: {unit: second, requests: 5}, other: {unit: second, requests: 5}}\n" +
		"d:\n  <<: *b\n  limit: {requests: 2}\n  other: {requests: 2}\n"
	x := yamlexpand.New(yamlexpand.Options{Overlaid: []string{"limit"}})
	out, ok := x.Expand(parse(t, src))
	if !ok {
		t.Fatal("refused")
	}
	got := encode(t, out)
	want := "d:\n    limit: {unit: second, requests: 2}\n    other: {requests: 2}\n"
	if !strings.HasSuffix(got, want) {
		t.Errorf("got\n%s\nwant it to end in\n%s", got, want)
	}
}

// Each problem is reported at its node with its field path, and Expand
// reports false; a merged mapping's keys written before the merge key are
// each reported.
func TestProblemsAreReportedAtTheirNodeAndPath(t *testing.T) {
	src := "base: &b {x: 1, y: 2}\nlist:\n  - x: 0\n    y: 0\n    <<: *b\n"
	var got []string
	x := yamlexpand.New(yamlexpand.Options{Report: func(n *yaml.Node, path *yamlcheck.Path, msg string) {
		got = append(got, strings.Join([]string{n.Value, path.String(), msg[:strings.Index(msg, ":")]}, "|"))
	}})
	if _, ok := x.Expand(parse(t, src)); ok {
		t.Fatal("accepted")
	}
	want := []string{"x|list[0].x|set before the merge key on line 5, which sets it too", "y|list[0].y|set before the merge key on line 5, which sets it too"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("reported\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, ok := yamlexpand.New(yamlexpand.Options{}).Expand(parse(t, src)); ok {
		t.Error("accepted without Report")
	}
}

// Written names the mapping of the document that an expanded mapping
// expands, however many aliases and merge keys place it.
func TestWrittenNamesTheMappingAsWritten(t *testing.T) {
	root := parse(t, "a: &m {k: v}\nb: *m\nc: {<<: *m, j: w}\n")
	x := yamlexpand.New(yamlexpand.Options{})
	out, ok := x.Expand(root)
	if !ok {
		t.Fatal("refused")
	}
	m, c := root.Content[1], root.Content[5]
	for i, want := range []*yaml.Node{m, m, c} {
		if got := x.Written(out.Content[2*i+1]); got != want {
			t.Errorf("Written(%s) is not the mapping written on line %d", out.Content[2*i].Value, want.Line)
		}
	}
}
