// API keys: each key's hash, plan and own limits, and its plan with them.

package config

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

func (d *decoder) keys(n *yaml.Node, path string) []rawKey {
	var out []rawKey
	d.List(n, path, func(_ int, e *yaml.Node, path string) {
		if d.emptyEntry(e, path, "the key (sha256, plan)") {
			return
		}
		rk := rawKey{key: &Key{}, node: e, path: path}
		var hashSaid bool
		d.Mapping(e, path, map[string]field{
			"name": func(n *yaml.Node, p string) { rk.key.Name = d.label(n, p) },
			"sha256": func(n *yaml.Node, p string) {
				hashSaid = true
				if !d.Scalar(n, p, "a string") {
					return
				}
				s := n.Value
				b, err := hex.DecodeString(s)
				if err != nil || len(b) != sha256.Size {
					d.Errorf(n, p, "want the 64 hex digits of the key's SHA-256 (e.g. `printf %%s KEY | sha256sum`), got %d characters", len(s))
					return
				}
				copy(rk.key.Hash[:], b)
				rk.hashNode = n
			},
			"plan": func(n *yaml.Node, p string) { rk.plan, rk.planNode = d.Str(n, p), n },
			"limits": func(n *yaml.Node, p string) {
				counts := len(d.counts)
				rk.overrides = d.limits(n, p)
				d.keyCounts(counts)
			},
		})
		if !hashSaid && e.Kind == yaml.MappingNode {
			d.Errorf(e, path+".sha256", "missing: a key is configured by its SHA-256, never in clear")
		}
		out = append(out, rk)
	})
	return out
}

// keyCounts refuses the count: settings read since the first of d.counts
// from, those of a key's own limits, and forgets them: a limit counts by
// its name (httplimit.Options.Count), so a key's count: would count the
// limits of that name of every client, in every plan.
func (d *decoder) keyCounts(from int) {
	for _, ca := range d.counts[from:] {
		if !ca.said {
			continue
		}
		d.Errorf(ca.node, ca.path, "count: belongs on the plan's limit of this name, not on a key's: limits of one name count alike, for every client")
	}
	d.counts = d.counts[:from]
}

// withOverrides returns base with the limits of overrides replacing those of
// the same name and adding the others.
func withOverrides(base *httplimit.Plan, overrides []sluice.Limit) *httplimit.Plan {
	if len(overrides) == 0 {
		return base
	}
	p := *base
	p.Limits = append([]sluice.Limit(nil), base.Limits...)
	for _, o := range overrides {
		replaced := false
		for i := range p.Limits {
			if p.Limits[i].Name() == o.Name() {
				p.Limits[i], replaced = o, true
			}
		}
		if !replaced {
			p.Limits = append(p.Limits, o)
		}
	}
	return &p
}

// keyIDsApart refuses a key's own limit whose ID (its id:, else its name)
// is that of a limit of its plan it does not replace, at its id: (else its
// name:): the key's plan, its own limits merged in, is checked in one call
// under the client's key, and a call that spends one state twice is
// refused (sluice.ValidateChecks), leaving every request of the key
// undecided and served. httplimit refuses the merged plan too, at field
// (the key's plan): its problem is located at the same place, and told once.
func (d *decoder) keyIDsApart(rk rawKey, raw *rawConfig, field string) {
	limits := rk.key.Plan.Limits
	own := map[string]bool{} // the names of the key's own limits
	for _, o := range rk.overrides {
		own[o.Name()] = true
	}
	first := map[string]int{} // an ID: the index of its first limit
	for j, l := range limits {
		i, dup := first[l.ID()]
		if !dup {
			first[l.ID()] = j
			continue
		}
		key, other := limits[j], limits[i]
		if !own[key.Name()] {
			key, other = other, key
		}
		n, path, _ := keyLimitNode(rk, key.Name())
		d.errorfIn(rk.file, n, path, "%q is the ID of the plan's limit %q too: a key's own limits are checked with "+
			"its plan's, and the two would share one state (give it an id: of its own)", key.ID(), other.Name())
		for _, k := range []int{i, j} {
			raw.atIn(rk.file, fmt.Sprintf("%s.Limits[%d]", field, k), n, path)
		}
	}
}

// keyLimitNode returns the node and path of the id: (else the name:) of the
// key's own limit called name, and the path of its entry, or the key's own
// node and path when it is not found.
func keyLimitNode(rk rawKey, name string) (n *yaml.Node, path, entry string) {
	if rk.node.Kind == yaml.MappingNode {
		if n, path, entry = limitNode(valueOf(rk.node, "limits"), rk.path+".limits", name); n != nil {
			return n, path, entry
		}
	}
	return rk.node, rk.path, rk.path
}

func planNames(plans []rawPlan) string {
	var names []string
	for _, p := range plans {
		names = append(names, p.plan.Name)
	}
	return strings.Join(names, ", ")
}

// resolveKeys gives each key read its plan (its own, else the default
// plan) with its own limits, puts it in c.Keys, and returns the keys for
// httplimit.Options, refusing a key of no plan and a key configured twice.
func (d *decoder) resolveKeys(c *Config, raw *rawConfig, byName map[string]*httplimit.Plan) []httplimit.Key {
	var keys []httplimit.Key
	firstOf := map[[32]byte]rawKey{} // each key's first entry
	for _, rk := range raw.keys {
		base := byName[rk.plan]
		if rk.plan == "" && !written(rk.planNode) { // no plan: of its own, or one refused already
			base = byName[c.Policy.DefaultPlan]
		} else if base == nil {
			if len(raw.plans) > 0 {
				d.errorfIn(rk.file, cmp.Or(rk.planNode, rk.node), rk.path+".plan", "%q is not a plan (plans: %s)", rk.plan, planNames(raw.plans))
			}
			continue
		}
		if base == nil || rk.hashNode == nil {
			continue
		}
		if first, dup := firstOf[rk.key.Hash]; dup {
			where := fmt.Sprintf("%s, line %d", first.path, first.hashNode.Line)
			if first.file != rk.file {
				where = fmt.Sprintf("%s of %s, line %d", first.path, cmp.Or(first.file, d.File), first.hashNode.Line)
			}
			d.errorfIn(rk.file, rk.hashNode, rk.path+".sha256", "the same key is configured twice (%s)", where)
			continue
		}
		firstOf[rk.key.Hash] = rk
		rk.key.Plan = withOverrides(base, rk.overrides)
		c.Keys[rk.key.Hash] = rk.key
		raw.atIn(rk.file, fmt.Sprintf("Keys[%d]", len(keys)), rk.node, rk.path)
		d.keyIDsApart(rk, raw, fmt.Sprintf("Keys[%d].Plan", len(keys)))
		keys = append(keys, httplimit.Key{Name: rk.key.Name, SHA256: rk.key.Hash, Plan: rk.key.Plan})
	}
	return keys
}
