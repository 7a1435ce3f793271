package server

import (
	"fmt"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// stateChanges says what a reload from old to cur does to the state
// clients have spent, limit by limit: a store keeps a limit's state under
// its ID (its name unless the config sets id:) and algorithm, so a limit
// whose algorithm changes starts afresh, and so does a limit renamed
// without an id. A change of quantity, window or burst keeps the state.
func stateChanges(old, cur *httplimit.Policy) []string {
	before := limitsByID(old)
	after := limitsByID(cur)
	var out []string
	for _, id := range after.order {
		l := after.m[id]
		prev, ok := before.m[id]
		switch {
		case ok && prev.Algorithm() != l.Algorithm():
			out = append(out, fmt.Sprintf("limit %q changes algorithm from %s to %s: every client's state of it starts afresh",
				l.Name(), prev.Algorithm(), l.Algorithm()))
		case ok && prev.Name() != l.Name():
			out = append(out, fmt.Sprintf("limit %q is renamed %q and keeps its state (id %q)", prev.Name(), l.Name(), id))
		case !ok:
			out = append(out, fmt.Sprintf("limit %q is new and starts afresh (to keep the state of a limit it renames, give it id: <the old name>)", l.Name()))
		}
	}
	return out
}

// limitIndex is every limit of a policy by ID, in the order first met.
type limitIndex struct {
	m     map[string]sluice.Limit
	order []string
}

func limitsByID(p *httplimit.Policy) limitIndex {
	ix := limitIndex{m: map[string]sluice.Limit{}}
	add := func(l sluice.Limit) {
		if _, ok := ix.m[l.ID()]; !ok {
			ix.m[l.ID()] = l
			ix.order = append(ix.order, l.ID())
		}
	}
	for _, pl := range p.Plans {
		for _, l := range pl.Limits {
			add(l)
		}
	}
	for _, l := range p.Global {
		add(l)
	}
	return ix
}
