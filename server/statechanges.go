package server

import (
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/internal/calendartext"
)

// The endings of the line of a new limit: how to keep the state of a limit
// renamed, which a rule's limits cannot.
const (
	hintID   = "(to keep the state of a limit it renames, give it id: <the old name>)"
	hintRule = "(a rule's limits keep their state under the rule's name: a renamed rule starts afresh)"
)

// maxKeyChanges bounds the lines a reload logs of keys' limits (a keys
// file of thousands moved to another plan): the first are told, then how
// many more there are.
const maxKeyChanges = 20

// reloadStateChanges is stateChanges of the configurations old and cur,
// their keys' own limits included (keyChanges, at most maxKeyChanges
// lines of them and one that counts the rest).
func reloadStateChanges(old, cur *config.Config) []string {
	out := stateChanges(old.Policy, cur.Policy, old.Rules, cur.Rules)
	keys := keyChanges(old, cur)
	if len(keys) > maxKeyChanges {
		keys = append(keys[:maxKeyChanges:maxKeyChanges],
			fmt.Sprintf("and %d more changes of keys' limits, not listed", len(keys)-maxKeyChanges))
	}
	return append(out, keys...)
}

// stateChanges says what a reload from old to cur (policies, and their
// rules) does to the state clients have spent, limit by limit: a store
// keeps a limit's state under its ID (its name unless the config sets id:)
// and algorithm, so a limit whose algorithm changes starts afresh, and so
// does a limit renamed without an id. A change of quantity, window or
// burst keeps the state; a calendar moved to another zone or start keeps
// a client's window in progress if its last charge falls in the new
// calendar's window in progress, until that window ends, and says so.
// Each plan's limits are compared with that plan's before, for the
// clients that stay on it (plans often share a name, as per-minute in free
// and pro, each with its own algorithm), and the line
// names the plan; a plan new in cur is not told, its clients coming from
// other plans. A rule's limits are kept under the rule's name and theirs,
// so a renamed rule starts afresh whatever its limits' ids.
func stateChanges(old, cur *httplimit.Policy, oldRules, curRules []httplimit.Rule) []string {
	var out []string
	for _, p := range cur.Plans {
		if was := old.Plan(p.Name); was != nil {
			out = append(out, limitChanges(indexOf(was.Limits), indexOf(p.Limits), fmt.Sprintf("plan %q: ", p.Name), hintID)...)
		}
	}
	out = append(out, limitChanges(indexOf(old.Global), indexOf(cur.Global), "global: ", hintID)...)
	out = append(out, limitChanges(ruleLimitsByID(oldRules), ruleLimitsByID(curRules), "", hintRule)...)
	for _, r := range oldRules {
		if !slices.ContainsFunc(curRules, func(c httplimit.Rule) bool { return c.Name == r.Name }) {
			out = append(out, fmt.Sprintf("rule %q is removed: the state its clients spent is no longer read", r.Name))
		}
	}
	return out
}

// keyChanges says what a reload from old to cur does to the state of the
// client of each key both list (keys: and keys_file:), for the limits it
// holds apart from its plan: its own limits (a key's limits:), before or
// after, and every limit of a key moved to another plan. A limit the key
// shares with a plan it stays on is told by the plan's line. Keys are told
// by name (or, unnamed, by the start of their SHA-256), in order of it.
func keyChanges(old, cur *config.Config) []string {
	var out []string
	for _, k := range sortedKeys(cur.Keys) {
		was := old.Keys[k.Hash]
		if was == nil || was.Plan == nil || k.Plan == nil {
			continue
		}
		before, after := indexOf(was.Plan.Limits), indexOf(k.Plan.Limits)
		if was.Plan.Name == k.Plan.Name {
			after = after.filter(func(l sluice.Limit) bool {
				prev, ok := before.m[l.ID()]
				return !sharedWith(l, cur.Policy.Plan(k.Plan.Name)) || ok && !sharedWith(prev, old.Policy.Plan(was.Plan.Name))
			})
		}
		out = append(out, limitChanges(before, after, "key "+keyLabel(k)+": ", hintID)...)
	}
	return out
}

// sharedWith reports whether l is p's limit of its ID, as p has it: not a
// key's own.
func sharedWith(l sluice.Limit, p *httplimit.Plan) bool {
	return p != nil && slices.Contains(p.Limits, l)
}

// sortedKeys returns the keys of m ordered by how keyLabel names them.
func sortedKeys(m map[[32]byte]*config.Key) []*config.Key {
	ks := make([]*config.Key, 0, len(m))
	for _, k := range m {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b *config.Key) int { return strings.Compare(keyLabel(a), keyLabel(b)) })
	return ks
}

// keyLabel names k in the log: its name quoted, or the start of its
// SHA-256 (never the key itself, which sluice never has).
func keyLabel(k *config.Key) string {
	if k.Name != "" {
		return fmt.Sprintf("%q", k.Name)
	}
	return "sha256:" + hex.EncodeToString(k.Hash[:6])
}

// limitChanges says, for each limit of after, whether it starts afresh or
// keeps its state of before; owner begins each line (`plan "pro": `), hint
// ends the line of a new limit.
func limitChanges(before, after limitIndex, owner, hint string) []string {
	var out []string
	for _, id := range after.order {
		l := after.m[id]
		prev, ok := before.m[id]
		switch {
		case ok && prev.Algorithm() != l.Algorithm():
			out = append(out, fmt.Sprintf("%slimit %q changes algorithm from %s to %s: every client's state of it starts afresh",
				owner, l.Name(), prev.Algorithm(), l.Algorithm()))
		case ok && prev.Name() != l.Name():
			out = append(out, fmt.Sprintf("%slimit %q is renamed %q and keeps its state (id %q)", owner, prev.Name(), l.Name(), id))
		case !ok:
			out = append(out, fmt.Sprintf("%slimit %q is new and starts afresh %s", owner, l.Name(), hint))
		case calendarMoved(prev, l):
			out = append(out, fmt.Sprintf("%slimit %q is whole again %s, was %s: a client's count of the %s in progress is kept if its last charge falls in the new calendar's %s in progress, until that %s ends",
				owner, l.Name(), calendartext.WholeAgain(l), calendartext.WholeAgain(prev), l.Period(), l.Period(), l.Period()))
		}
	}
	return out
}

// calendarMoved reports whether cur moves the calendar of prev, one
// period's, to another zone or start (its offset). A fixed window's count
// belongs to the window that holds its last charge (see internal/algo's
// FixedWindow), so under the new calendar it is kept while that charge
// falls in the window in progress.
func calendarMoved(prev, cur sluice.Limit) bool {
	p := cur.Period()
	return p != 0 && prev.Period() == p && prev.Offset() != cur.Offset()
}

// limitIndex is the limits of one owner (a plan, the global limits, a key,
// the rules) by ID, in the order first met.
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

// filter returns the index of the limits of ix that keep says to keep.
func (ix limitIndex) filter(keep func(sluice.Limit) bool) limitIndex {
	var out limitIndex
	for _, id := range ix.order {
		if l := ix.m[id]; keep(l) {
			out.add(l)
		}
	}
	return out
}

// indexOf is the index of limits, those of one owner.
func indexOf(limits []sluice.Limit) limitIndex {
	var ix limitIndex
	for _, l := range limits {
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
