package server

import (
	"fmt"
	"slices"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// stateChanges says what a reload from old to cur (policies, and their
// rules) does to the state clients have spent, limit by limit: a store
// keeps a limit's state under its ID (its name unless the config sets id:)
// and algorithm, so a limit whose algorithm changes starts afresh, and so
// does a limit renamed without an id. A change of quantity, window or
// burst keeps the state. A rule's limits are kept under the rule's name
// and theirs, so a renamed rule starts afresh whatever its limits' ids.
func stateChanges(old, cur *httplimit.Policy, oldRules, curRules []httplimit.Rule) []string {
	out := limitChanges(limitsByID(old), limitsByID(cur),
		"(to keep the state of a limit it renames, give it id: <the old name>)")
	out = append(out, limitChanges(ruleLimitsByID(oldRules), ruleLimitsByID(curRules),
		"(a rule's limits keep their state under the rule's name: a renamed rule starts afresh)")...)
	for _, r := range oldRules {
		if !slices.ContainsFunc(curRules, func(c httplimit.Rule) bool { return c.Name == r.Name }) {
			out = append(out, fmt.Sprintf("rule %q is removed: the state its clients spent is no longer read", r.Name))
		}
	}
	return out
}

// limitChanges says, for each limit of after, whether it starts afresh or
// keeps its state of before; hint ends the line of a new limit.
func limitChanges(before, after limitIndex, hint string) []string {
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
			out = append(out, fmt.Sprintf("limit %q is new and starts afresh %s", l.Name(), hint))
		}
	}
	return out
}

// limitIndex is every limit of a policy by ID, in the order first met.
type limitIndex struct {
	m     map[string]sluice.Limit
	order []string
}

func (ix *limitIndex) add(l sluice.Limit) {
	if ix.m == nil {
		ix.m = map[string]sluice.Limit{}
	}
	if _, ok := ix.m[l.ID()]; !ok {
		ix.m[l.ID()] = l
		ix.order = append(ix.order, l.ID())
	}
}

func limitsByID(p *httplimit.Policy) limitIndex {
	var ix limitIndex
	for _, pl := range p.Plans {
		for _, l := range pl.Limits {
			ix.add(l)
		}
	}
	for _, l := range p.Global {
		ix.add(l)
	}
	return ix
}

// ruleLimitsByID is every limit of rules by the ID the store keeps it
// under, named as the rule has it: "<rule>.<limit>", and its ID likewise.
func ruleLimitsByID(rules []httplimit.Rule) limitIndex {
	var ix limitIndex
	for _, r := range rules {
		for _, l := range r.Limits {
			q := l.Named(r.Name + "." + l.Name())
			if id := l.ID(); id != l.Name() {
				q = q.WithID(r.Name + "." + id)
			}
			ix.add(q)
		}
	}
	return ix
}
