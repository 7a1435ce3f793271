// One algorithm per limit ID on Redis, across the plans and keys a client may be decided under in turn.

package config

import (
	"cmp"
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice"
)

// limitAt is a limit of a plan or a key's own, and where it was read: the
// node and path of its id: (else its name:), the path of its entry, in
// file ("" for the configuration's own, else the keys file).
type limitAt struct {
	limit       sluice.Limit
	node        *yaml.Node
	path, entry string
	file        string
}

// algorithmsAgree refuses, when the store is Redis, a limit of a plan or a
// key's own limit whose ID is that of a limit of another algorithm read
// before it (the plans in file order, then the keys, those of the keys
// file last), at its id: (else its name:), naming the other. One client
// may be decided under several plans in turn — tokens naming two plans, a
// trusted proxy's plan header, the decision API naming a plan for a
// subject, a listed key's own limits or its plan's — and Redis keeps one
// state per client and ID, holding its algorithm: a state of another
// algorithm counts as fresh (see the redis package), so such a client
// would start each limit afresh at every turn and be limited by neither.
// The memory store keeps a state per algorithm and is left alone. The
// global limits are kept under a subject of their own, and a rule's under
// IDs that no plan's or other rule's may take (httplimit refuses it), so
// neither can meet a limit of another algorithm under its ID.
func (d *decoder) algorithmsAgree(s *Store, raw *rawConfig) {
	if s.Type != "redis" {
		return
	}
	first := map[string]limitAt{} // an ID: its first limit read
	for _, la := range limitsInTurn(raw) {
		was, ok := first[la.limit.ID()]
		if !ok {
			first[la.limit.ID()] = la
			continue
		}
		if was.limit.Algorithm() == la.limit.Algorithm() {
			continue
		}
		where := fmt.Sprintf("%s (line %d)", was.entry, was.node.Line)
		if was.file != la.file {
			where = fmt.Sprintf("%s of %s (line %d)", was.entry, cmp.Or(was.file, d.File), was.node.Line)
		}
		d.errorfIn(la.file, la.node, la.path, "%q is also the ID of %s, a %s, and this one is a %s: Redis keeps one state "+
			"per client and ID, so a client decided under both in turn would start each afresh (give one an id: of its own)",
			la.limit.ID(), where, was.limit.Algorithm(), la.limit.Algorithm())
	}
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
			out = append(out, limitAt{l, n, path, entry, ""})
		}
	}
	for _, rk := range raw.keys {
		for _, l := range rk.overrides {
			n, path, entry := keyLimitNode(rk, l.Name())
			out = append(out, limitAt{l, n, path, entry, rk.file})
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
