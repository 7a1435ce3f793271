// The ids plans' limits of one name and two algorithms take on Redis.

package sim

import (
	"fmt"
	"strings"
)

// idApart is the id: a plan's limit takes on the Redis store, apart from
// the limit of its name and another algorithm that keeps the name as ID:
// kept, the first such limit, of plan keptBy.
type idApart struct {
	id     string
	kept   Recommendation
	keptBy string
}

// limitIDsApart returns, when the store is Redis, the id: of each plan's
// limit (by plan and limit index) whose name a limit of another algorithm
// of a plan before it (in a.Plans' order, that of the configuration)
// takes: "<name>-<algorithm>" (made unique among the names and IDs of the
// configuration's limits), the one for every limit of that name and
// algorithm; the algorithm met first keeps the name as ID. The design
// names limits after their window and writes no id:, so plans of one
// window and two precisions hold a name of two algorithms, and config
// refuses that on Redis: Redis keeps one state per client and ID, of one
// algorithm, so a client decided under both plans in turn would start each
// afresh. With ids apart the limits of one name and algorithm still share
// one state across plans and those of another count apart, as on the
// memory store (which keeps a state per ID and algorithm), whose
// configuration takes no id. migrate gives imported plans' limits ids in
// the same form. Nil on memory.
func (a *APIAnalysis) limitIDsApart() map[[2]int]idApart {
	if a.Store != "redis" {
		return nil
	}
	taken := a.limitStateNames()
	first := map[string]idApart{}   // a name: the limit that keeps it as ID
	given := map[[2]string]string{} // a name and an algorithm: the id given
	out := map[[2]int]idApart{}
	for i, p := range a.Plans {
		for j, l := range p.Limits {
			rec := l.Rec()
			kept, ok := first[rec.Name]
			if !ok {
				first[rec.Name] = idApart{id: rec.Name, kept: rec, keptBy: p.Name}
				continue
			}
			if kept.kept.Algorithm == rec.Algorithm {
				continue
			}
			k := [2]string{rec.Name, rec.Algorithm}
			if given[k] == "" {
				given[k] = freeName(rec.Name+"-"+rec.Algorithm, maxNameLen, taken)
				taken[given[k]] = true
			}
			kept.id = given[k]
			out[[2]int{i, j}] = kept
		}
	}
	return out
}

// limitStateNames returns every name and ID a limit of the configuration
// takes: the plans' and the global limit's names (the design writes no
// id: otherwise) and the rules' limits' IDs ("<rule>.<limit>").
func (a *APIAnalysis) limitStateNames() map[string]bool {
	taken := map[string]bool{}
	for _, p := range a.Plans {
		for _, l := range p.Limits {
			taken[l.Rec().Name] = true
		}
	}
	if a.Global != nil {
		taken[a.Global.Rec().Name] = true
	}
	for _, r := range a.Rules {
		taken[r.Name+"."+r.Limit.Rec().Name] = true
	}
	return taken
}

// suffixRoom is the characters freeName leaves for a suffix ("-2") that
// tells a name from the others.
const suffixRoom = 4

// freeName returns base cut to most − suffixRoom characters, or that with
// -2, -3 and so on, cut further for a longer suffix: the first not taken,
// at most most characters. taken holds at most every limit or rule of the
// design, so the suffix stays short.
func freeName(base string, most int, taken map[string]bool) string {
	cut := func(s string, n int) string { return strings.TrimRight(s[:min(len(s), n)], "-") }
	base = cut(base, most-suffixRoom)
	name := base
	for i := 2; taken[name]; i++ {
		suffix := fmt.Sprintf("-%d", i)
		name = cut(base, most-len(suffix)) + suffix
	}
	return name
}

// idYAML writes the id: of a plan's limit apart, as the last field of its
// entry at indent, saying why.
func idYAML(b *strings.Builder, indent string, ap idApart) {
	fmt.Fprintf(b, "%s  id: %s   # a state apart from %s's %s, a %s: Redis keeps one state per client and id, "+
		"so a client decided under both plans in turn would start each afresh\n",
		indent, yamlName(ap.id), ap.keptBy, ap.kept.Name, ap.kept.Algorithm)
}
