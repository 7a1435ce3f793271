// One algorithm per limit ID on Redis, across the plans and keys a client may be decided under in turn.

package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/internal/yamlcheck"
)

// limitAt is a limit of a plan or a key's own (own), and where it was
// read: the node and path of its id: (else its name:), the path of its
// entry, in file ("" for the configuration's own, else the keys file).
type limitAt struct {
	limit       sluice.Limit
	node        *yaml.Node
	path, entry string
	file        string
	own         bool
}

// algorithmsAgree refuses, when the store is Redis, a limit of a plan or a
// key's own limit whose ID is that of a plan's limit of another algorithm
// read before it (the plans in file order, then the keys, those of the
// keys file last), at its id: (else its name:), naming the other (two
// keys' own limits never meet: see collisions). One client
// may be decided under several plans in turn — tokens naming two plans, a
// trusted proxy's plan header, the decision API naming a plan for a
// subject, a listed key's own limits or its plan's — and Redis keeps one
// state per client and ID, holding its algorithm: a state of another
// algorithm counts as fresh (see the redis package), so such a client
// would start each limit afresh at every turn and be limited by neither.
// The memory store keeps a state per algorithm and is left alone. The
// global limits are kept under a subject of their own, and a rule's under
// IDs that no plan's or other rule's may take (httplimit refuses it), so
// neither can meet a limit of another algorithm under its ID. A reload is
// judged by the store running too (AlgorithmsAgreeOn).
func (d *decoder) algorithmsAgree(s *Store, raw *rawConfig) {
	if s.Type != "redis" {
		return
	}
	for _, c := range collisions(limitsInTurn(raw)) {
		was, la := c.was, c.la
		where := fmt.Sprintf("%s (line %d)", was.entry, was.node.Line)
		if was.file != la.file {
			where = fmt.Sprintf("%s of %s (line %d)", was.entry, cmp.Or(was.file, d.File), was.node.Line)
		}
		d.errorfIn(la.file, la.node, la.path, "%q is also the ID of %s, a %s, and this one is a %s: %s",
			la.limit.ID(), where, was.limit.Algorithm(), la.limit.Algorithm(), oneStatePerID)
	}
}

// oneStatePerID says why a limit ID of two algorithms is refused on Redis,
// and what to do.
const oneStatePerID = "Redis keeps one state per client and ID, so a client decided under both in turn would start each afresh " +
	"(give one an id: of its own)"

// collision is a limit (la) whose ID is that of a limit of another
// algorithm read before it (was, the first of that ID).
type collision struct{ was, la limitAt }

// collisions returns each limit of las, in order, whose ID is that of an
// earlier plan's limit of another algorithm, with the first plan's limit
// of that ID. A key's own limits are weighed against the plans' only: a
// key's client is decided under its own limits or under a plan named for
// it, never under another key's own.
func collisions(las []limitAt) []collision {
	var out []collision
	first := map[string]limitAt{} // an ID: its first plan's limit read
	for _, la := range las {
		was, ok := first[la.limit.ID()]
		if !ok {
			if !la.own {
				first[la.limit.ID()] = la
			}
			continue
		}
		if was.limit.Algorithm() != la.limit.Algorithm() {
			out = append(out, collision{was, la})
		}
	}
	return out
}

// AlgorithmsAgreeOn judges c's plans' limits and keys' own limits by the
// store section inForce (that of the configuration the running store was
// opened with: a reload keeps the store it started on, whatever the file's
// store section says) as Load judges them by c's own: when inForce is
// Redis, it returns an *Error at each limit whose ID is that of a plan's
// limit of another algorithm before it (the plans in order, then the keys
// by name),
// naming the other, joined; else nil. A plan's limit is located by its
// entry's path, a key's own limit (of keys: or the keys file) by the
// key's name: the lines they were read at are not kept.
func (c *Config) AlgorithmsAgreeOn(inForce Store) error {
	if inForce.Type != "redis" {
		return nil
	}
	var errs []error
	for _, co := range collisions(c.limitsKept()) {
		was, la := co.was, co.la
		errs = append(errs, &Error{File: c.File, Path: la.path, Msg: fmt.Sprintf("%q is also the ID of %s, a %s, and this one "+
			"is a %s, and the store running is Redis (a reload keeps the store it started on): %s",
			la.limit.ID(), was.entry, was.limit.Algorithm(), la.limit.Algorithm(), oneStatePerID)})
	}
	return errors.Join(errs...)
}

// limitsKept is limitsInTurn for c, as it keeps them: the limits of every
// plan, in order, at the path of their entry, then every key's own (those
// its plan does not hold, by name, ID and algorithm), the keys by name,
// each at a path naming its key.
func (c *Config) limitsKept() []limitAt {
	var out []limitAt
	if c.Policy == nil {
		return nil
	}
	byName := map[string]*httplimit.Plan{} // a plan's name: the first plan of that name
	for _, p := range c.Policy.Plans {
		if byName[p.Name] == nil {
			byName[p.Name] = p
		}
		for i, l := range p.Limits {
			path := fmt.Sprintf("%s.limits[%d]", yamlcheck.Join("plans", p.Name), i)
			out = append(out, limitAt{limit: l, path: path, entry: path})
		}
	}
	keys := slices.SortedFunc(maps.Values(c.Keys), func(a, b *Key) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), bytes.Compare(a.Hash[:], b.Hash[:]))
	})
	for _, k := range keys {
		if k.Plan == nil {
			continue
		}
		base := byName[k.Plan.Name]
		for _, l := range k.Plan.Limits {
			if base != nil && slices.ContainsFunc(base.Limits, func(b sluice.Limit) bool {
				return b.Name() == l.Name() && b.ID() == l.ID() && b.Algorithm() == l.Algorithm()
			}) {
				continue
			}
			path := fmt.Sprintf("key %q's own limit %q", k.Name, l.Name())
			out = append(out, limitAt{limit: l, path: path, entry: path, own: true})
		}
	}
	return out
}

// limitsInTurn returns the limits of every plan, then every key's own, in
// the order they were read, each with its place.
func limitsInTurn(raw *rawConfig) []limitAt {
	var out []limitAt
	for _, rp := range raw.plans {
		for _, l := range rp.plan.Limits {
			n, path, entry := limitNode(rp.limitsNode, rp.path+".limits", l.Name())
			if n == nil {
				n, path, entry = rp.node, rp.path, rp.path
			}
			out = append(out, limitAt{l, n, path, entry, "", false})
		}
	}
	for _, rk := range raw.keys {
		for _, l := range rk.overrides {
			n, path, entry := keyLimitNode(rk, l.Name())
			out = append(out, limitAt{l, n, path, entry, rk.file, true})
		}
	}
	return out
}

// limitNode returns the node and path of the id: (else the name:) of the
// limit called name in seq, the list of limits read at path, and the path
// of its entry; a nil node when seq is no list or holds no limit of that
// name.
func limitNode(seq *yaml.Node, path, name string) (*yaml.Node, string, string) {
	if seq == nil || seq.Kind != yaml.SequenceNode {
		return nil, "", ""
	}
	for i, e := range seq.Content {
		if e.Kind != yaml.MappingNode {
			continue
		}
		if n := valueOf(e, "name"); n != nil && n.Value == name {
			entry := fmt.Sprintf("%s[%d]", path, i)
			if id := valueOf(e, "id"); id != nil {
				return id, entry + ".id", entry
			}
			return n, entry + ".name", entry
		}
	}
	return nil, "", ""
}
