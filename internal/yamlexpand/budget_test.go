package yamlexpand_test

import (
	"fmt"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/internal/yamlcheck"
	"github.com/sluice-dev/sluice/internal/yamlexpand"
)

// reportTo returns an Options.Report that sets *got to the path and
// message of the problem reported.
func reportTo(got *string) func(*yaml.Node, *yamlcheck.Path, string) {
	return func(_ *yaml.Node, path *yamlcheck.Path, msg string) { *got = path.String() + ": " + msg }
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
// mapping of 200 keys merged m times copies 401m values (as an alias of
// it does: the mapping, its keys and its values, each time) in a document
// of 405+m nodes (the merge key and its list not counted), whose budget is
// 99 times that: 52,932 of the 53,163 allowed for m = 132, 53,333 of the
// 53,262 allowed for m = 133. (gopkg.in/yaml.v2 counts the document node
// too, and so refuses the file from m = 134, as the expansion of the
// whole document does.)
func TestMergesPastTheCopyBudgetAreRefused(t *testing.T) {
	keys := make([]string, 200)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%d: 1", i)
	}
	doc := func(m int) string {
		return "a: &a {" + strings.Join(keys, ", ") + "}\nb: {<<: [" + strings.Repeat("*a, ", m-1) + "*a]}\n"
	}
	if _, ok := yamlexpand.New(yamlexpand.Options{}).Expand(parse(t, doc(132))); !ok {
		t.Error("refused 52,932 copies in a document of 537 nodes")
	}
	var got string
	x := yamlexpand.New(yamlexpand.Options{Report: reportTo(&got)})
	if _, ok := x.Expand(parse(t, doc(133))); ok {
		t.Fatal("accepted 53,333 copies in a document of 538 nodes")
	}
	if want := "b.<<: the document's aliases and merge keys copy more than 53262 values by here, the most a document of 538 YAML nodes may"; !strings.HasPrefix(got, want) {
		t.Errorf("reported %q, want %s…", got, want)
	}
}

// An alias copies every node it stands for, as yaml.v2 counts the nodes it
// decodes: an alias of a list of aliases copies the list, each alias in it
// and what each names. A list l0 of n scalars, a list l1 of n aliases of
// l0 and a list l2 of n aliases of l1 copy n(n+1) + n(1+n(n+2)) values in
// a document of 7+3n nodes: 4,896 of the 5,445 allowed for n = 16, and
// 5,814 of the 5,742 allowed for n = 17, past the bound at the 17th alias
// of l1.
func TestAliasesOfAliasesCountWhatTheyStandFor(t *testing.T) {
	doc := func(n int) string {
		return "l0: &l0 [" + strings.Repeat("x, ", n-1) + "x]\n" +
			"l1: &l1 [" + strings.Repeat("*l0, ", n-1) + "*l0]\n" +
			"l2: [" + strings.Repeat("*l1, ", n-1) + "*l1]\n"
	}
	if _, ok := yamlexpand.New(yamlexpand.Options{}).Expand(parse(t, doc(16))); !ok {
		t.Error("refused 4,896 copies in a document of 55 nodes")
	}
	var got string
	x := yamlexpand.New(yamlexpand.Options{Report: reportTo(&got)})
	if _, ok := x.Expand(parse(t, doc(17))); ok {
		t.Fatal("accepted 5,814 copies in a document of 58 nodes")
	}
	if want := "l2[16]: the document's aliases and merge keys copy more than 5742 values by here, the most a document of 58 YAML nodes may"; !strings.HasPrefix(got, want) {
		t.Errorf("reported %q, want %s…", got, want)
	}
}

// An Options.Overlaid mapping written over one that such overlays built
// copies the keys of that one, and counts them: merging m mappings of that
// key, each of one key of its own, copies about m²/2 keys, refused for a
// large m.
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
