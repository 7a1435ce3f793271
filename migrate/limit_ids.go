// One algorithm per limit ID on the Redis store, across the plans.

package migrate

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// planLimits is a plan's limits as the configuration writes them, in its
// order.
type planLimits struct {
	plan   string
	limits []*Limit
}

// idsApartByAlgorithm gives, on the Redis store (Instances above 0), each
// limit of a plan whose ID a limit of another algorithm read before it
// takes (the imported plan's, then Plans', in file order) an id: of its
// own, "<name>-<algorithm>" (made unique among every ID and name of the
// configuration), the one for every limit of that name and algorithm; the
// algorithm read first keeps the name as ID. Redis keeps one state per
// client and ID, of one algorithm, and config refuses an ID of two there:
// a client decided under both plans in turn would start each afresh. The
// limits of one name and algorithm still share one state across plans, and
// those of another apart, as on the memory store, which keeps a state per
// ID and algorithm. Each name given an id is reported; names, and so
// headers and metrics, are unchanged. The memory store is left alone.
func (t *Translation) idsApartByAlgorithm() {
	if t.Instances == 0 {
		return
	}
	lists := t.planLimitLists()
	taken := t.stateNames()
	first := map[string]string{}     // an ID: the algorithm that keeps it
	ids := map[[2]string]string{}    // an ID and another algorithm: the id given
	uses := map[[2]string][]string{} // an ID and an algorithm: its plans
	var apart []string               // the IDs given ids, in file order
	for _, pl := range lists {
		for _, l := range pl.limits {
			id := cmp.Or(l.ID, l.Name)
			k := [2]string{id, l.Algorithm}
			if !slices.Contains(uses[k], pl.plan) {
				uses[k] = append(uses[k], pl.plan)
			}
			if first[id] == "" {
				first[id] = l.Algorithm
			}
			if first[id] == l.Algorithm {
				continue
			}
			if ids[k] == "" {
				ids[k] = uniqueName(id+"-"+l.Algorithm, 60, func(n string) bool { return taken[n] })
				taken[ids[k]] = true
			}
			if !slices.Contains(apart, id) {
				apart = append(apart, id)
			}
			l.ID = ids[k]
		}
	}
	for _, id := range apart {
		t.reportIDsApart(id, first[id], ids, uses)
	}
}

// reportIDsApart reports the ids given to the limits of ID id of the
// algorithms other than kept, the one that keeps it: given by algorithm,
// used by plans (ID and algorithm: plans, in file order).
func (t *Translation) reportIDsApart(id, kept string, given map[[2]string]string, uses map[[2]string][]string) {
	var others []string
	for k, to := range given {
		if k[0] == id {
			others = append(others, fmt.Sprintf("the %s ones (%s) take id: %s", k[1], planList(uses[k]), to))
		}
	}
	slices.Sort(others)
	t.same("limit "+id, "the plans' limits named %s count by more than one algorithm: the %s ones (%s) keep the name as their ID and %s. Redis keeps one state per client and ID, of one algorithm, so a client decided under two of those plans in turn would start each limit afresh; with an id: of their own they count apart, as the source's plugins did and as sluice's memory store would. They keep their name in headers and metrics.",
		id, kept, planList(uses[[2]string{id, kept}]), strings.Join(others, "; "))
}

// planList names plans: "plan a", "plans a, b" (the first few, and how
// many more).
func planList(plans []string) string {
	if len(plans) == 1 {
		return "plan " + plans[0]
	}
	return "plans " + fewOf(plans, ", ")
}

// planLimitLists returns the limits of each plan the configuration
// writes, in its order: the imported plan's (its placeholder when it has
// none of its own), then Plans'. A list that may share its array with
// another (a rule's copy) is copied first, so that an id given to a plan's
// limit is its own.
func (t *Translation) planLimitLists() []planLimits {
	imported := planLimits{plan: PlanName}
	t.Limits = slices.Clone(t.Limits)
	for i := range t.Limits {
		if !t.Limits[i].Global {
			imported.limits = append(imported.limits, &t.Limits[i])
		}
	}
	if len(imported.limits) == 0 {
		imported.limits = []*Limit{{Name: placeholder, Algorithm: "fixed-window"}}
	}
	out := []planLimits{imported}
	for i := range t.Plans {
		p := &t.Plans[i]
		p.Limits = slices.Clone(p.Limits)
		pl := planLimits{plan: p.Name}
		for j := range p.Limits {
			pl.limits = append(pl.limits, &p.Limits[j])
		}
		out = append(out, pl)
	}
	return out
}

// stateNames returns every name and ID a limit of the configuration
// takes: the plans' and the global limits' names and IDs, the placeholder,
// and the rules' limits' IDs ("<rule>.<limit>"), none of which an id given
// may take.
func (t *Translation) stateNames() map[string]bool {
	taken := map[string]bool{placeholder: true}
	add := func(l Limit) {
		taken[l.Name] = true
		if l.ID != "" {
			taken[l.ID] = true
		}
	}
	for _, l := range t.Limits {
		add(l)
	}
	for _, p := range t.Plans {
		for _, l := range p.Limits {
			add(l)
		}
	}
	for _, r := range t.SluiceRules {
		for _, l := range r.Limits {
			taken[r.Name+"."+cmp.Or(l.ID, l.Name)] = true
		}
	}
	return taken
}
