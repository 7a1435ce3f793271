package yamlexpand_test

import (
	"fmt"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/internal/yamlexpand"
)

// reportTo returns an Options.Report that sets *got to the path and
// message of the problem reported.
func reportTo(got *string) func(*yaml.Node, string, string) {
	return func(_ *yaml.Node, path, msg string) { *got = path + ": " + msg }
}

// CopyBudget is gopkg.in/yaml.v2's bound on alias decoding: copies may be
// 99% of the total of nodes and copies up to 400,000, 10% from 4,000,000
// on, and a total of 1,000 is always allowed.
func TestCopyBudgetIsYAMLv2sAliasRatio(t *testing.T) {
	for _, c := range []struct{ nodes, budget int }{
		{0, 1000}, {5, 995}, {400, 39_600}, {4000, 396_000}, {3_600_000, 400_000}, {9_000_000, 1_000_000},
	} {
		if got := yamlexpand.CopyBudget(c.nodes); got != c.budget {
			t.Errorf("CopyBudget(%d) = %d, want %d", c.nodes, got, c.budget)
		}
	}
}

// A document whose merge keys copy more values than its size allows is
// refused at the merge key that goes past the bound, with the bound: one
// mapping of 200 keys merged m times copies 201m values (an alias and 200
// keys each) in a document of 407+m nodes, whose budget is 99 times that.
func TestMergesPastTheCopyBudgetAreRefused(t *testing.T) {
	keys := make([]string, 200)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%d: 1", i)
	}
	doc := func(m int) string {
		return "a: &a {" + strings.Join(keys, ", ") + "}\nb: {<<: [" + strings.Repeat("*a, ", m-1) + "*a]}\n"
	}
	if _, ok := yamlexpand.New(yamlexpand.Options{}).Expand(parse(t, doc(395))); !ok {
		t.Error("refused 79,395 copies in a document of 802 nodes")
	}
	var got string
	x := yamlexpand.New(yamlexpand.Options{Report: reportTo(&got)})
	if _, ok := x.Expand(parse(t, doc(396))); ok {
		t.Fatal("accepted 79,596 copies in a document of 803 nodes")
	}
	if want := "b.<<: the document's aliases and merge keys copy more than 79497 values by here, the most a document of 803 YAML nodes may"; !strings.HasPrefix(got, want) {
		t.Errorf("reported %q, want %s…", got, want)
	}
}

// An Options.Overlaid mapping written over another copies the keys of
// both, and counts them: merging m mappings of that key, each of one key
// of its own, copies about m²/2 keys, refused for a large m.
func TestOverlaysPastTheCopyBudgetAreRefused(t *testing.T) {
	var b strings.Builder
	b.WriteString("d: {<<: [")
	for i := range 5000 {
		fmt.Fprintf(&b, "{limit: {k%d: 1}}, ", i)
	}
	b.WriteString("{limit: {}}]}\n")
	var got string
	x := yamlexpand.New(yamlexpand.Options{Overlaid: []string{"limit"}, Report: reportTo(&got)})
	if _, ok := x.Expand(parse(t, b.String())); ok {
		t.Fatal("accepted")
	}
	if want := "d.limit: the document's aliases and merge keys copy more than "; !strings.HasPrefix(got, want) {
		t.Errorf("reported %q, want %s…", got, want)
	}
}

// A merge key's value may be a list written in place, but not an alias of
// a list: yaml.v2 and yaml.v3 refuse it ("map merge requires map or
// sequence of maps as the value").
func TestAnAliasOfAListIsNotMerged(t *testing.T) {
	var got string
	x := yamlexpand.New(yamlexpand.Options{Report: reportTo(&got)})
	if _, ok := x.Expand(parse(t, "l: &l [{k: v}]\nm: {<<: *l}\n")); ok {
		t.Fatal("merged an alias of a list")
	}
	if want := "m.<<: want a mapping (or a list of mappings) to merge, got an alias of a list (*l)"; !strings.HasPrefix(got, want) {
		t.Errorf("reported %q, want %s…", got, want)
	}
	if _, ok := yamlexpand.New(yamlexpand.Options{}).Expand(parse(t, "a: &a {k: v}\nm: {<<: [*a, {j: w}]}\n")); !ok {
		t.Error("refused a list of mappings written in place")
	}
}
