package envoy

import (
	"fmt"
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/internal/yamlcheck"
)

// Rules files are read as envoyproxy/ratelimit reads them (with
// gopkg.in/yaml.v2), anchors and aliases included: an alias (*name) stands
// for the node its anchor (&name) marks, and a merge key (<<: *name, or
// <<: [*a, *b]) sets the keys of the mappings it names, as if written
// there. Where a merged mapping and a key written in the mapping both set
// a key, the one that comes later in the mapping is the value (the first
// of a list of merged mappings wins over the others), as yaml.v2 decides;
// a key written before a merge key that also sets it is an error, because
// YAML 1.2 readers (and so other tools reading the same file) keep the
// written one instead. A descriptor's rate_limit is the exception:
// envoyproxy/ratelimit decodes it into a pointer to a struct, which yaml.v2
// allocates once and then decodes every later rate_limit mapping of the
// descriptor into, so a later rate_limit mapping changes only the fields it
// names and keeps the others of the earlier one (see overlay); a later
// null clears it.

// maxExpandedNodes bounds the nodes of one document once its aliases are
// expanded, so that a small file of aliases of aliases cannot make the
// loader walk an exponentially large tree.
const maxExpandedNodes = 1 << 21

// expander expands the aliases and merge keys of one document.
type expander struct {
	d *decoder
	// done maps each node expanded to its expansion; sizes holds the node
	// count of each expansion, aliases expanded.
	done  map[*yaml.Node]*yaml.Node
	sizes map[*yaml.Node]int
	// open holds the nodes being expanded: an alias of one of them is an
	// alias of a node that contains it.
	open map[*yaml.Node]bool
	// failed is set once a problem is recorded: the expansion stops there.
	failed bool
}

// expandAliases returns doc with its aliases and merge keys expanded, or
// false after recording, as a located *Error, why it cannot be.
func (d *decoder) expandAliases(doc *yaml.Node) (*yaml.Node, bool) {
	x := &expander{d: d, done: map[*yaml.Node]*yaml.Node{}, sizes: map[*yaml.Node]int{}, open: map[*yaml.Node]bool{}}
	out := x.node(doc, "")
	return out, !x.failed
}

func (x *expander) fail(n *yaml.Node, path, format string, args ...any) *yaml.Node {
	x.failed = true
	x.d.Errorf(n, path, format, args...)
	return n
}

// node returns the expansion of n (n itself when it holds no alias and no
// merge key).
func (x *expander) node(n *yaml.Node, path string) *yaml.Node {
	if x.failed {
		return n
	}
	if n.Kind == yaml.AliasNode {
		switch {
		case n.Alias == nil:
			return x.fail(n, path, "alias *%s names no anchor", n.Value)
		case x.open[n.Alias]:
			return x.fail(n, path, "alias *%s is inside the node its anchor marks", n.Value)
		}
		return x.node(n.Alias, path)
	}
	if out, ok := x.done[n]; ok {
		return out
	}
	if len(n.Content) == 0 {
		x.done[n], x.sizes[n] = n, 1
		return n
	}
	x.open[n] = true
	defer delete(x.open, n)
	var content []*yaml.Node
	if n.Kind == yaml.MappingNode {
		content = x.mapping(n, path)
	} else {
		content = make([]*yaml.Node, len(n.Content))
		for i, c := range n.Content {
			p := path
			if n.Kind == yaml.SequenceNode {
				p = fmt.Sprintf("%s[%d]", path, i)
			}
			content[i] = x.node(c, p)
		}
	}
	if x.failed {
		return n
	}
	size := 1
	for _, c := range content {
		size += x.sizes[c]
	}
	if size > maxExpandedNodes {
		return x.fail(n, path, "its aliases expand to more than %d YAML nodes", maxExpandedNodes)
	}
	out := n
	if !slices.Equal(content, n.Content) {
		cp := *n
		cp.Content = content
		out = &cp
	}
	x.done[n], x.sizes[out] = out, size
	return out
}

// mapping returns the keys and values of the mapping n, its merge keys
// replaced by the keys they set.
func (x *expander) mapping(n *yaml.Node, path string) []*yaml.Node {
	type pair struct {
		k, v    *yaml.Node
		written bool // written in n, not merged
	}
	var pairs []pair
	at := map[string]int{} // key → index in pairs
	set := func(k, v *yaml.Node, written bool, mergeKey *yaml.Node) {
		i, ok := at[k.Value]
		switch {
		case !ok || k.Kind != yaml.ScalarNode || written && pairs[i].written:
			// A key written twice stays twice, for the decoder to refuse.
			at[k.Value] = len(pairs)
			pairs = append(pairs, pair{k, v, written})
		case written:
			pairs[i] = pair{k, x.overlay(k, pairs[i].v, v), written}
		case pairs[i].written:
			x.fail(pairs[i].k, yamlcheck.Join(path, k.Value),
				"set before the merge key on line %d, which sets it too: move it after the merge key (envoyproxy/ratelimit keeps the merged value, YAML 1.2 the written one)",
				mergeKey.Line)
		default:
			pairs[i] = pair{k, x.overlay(k, pairs[i].v, v), written}
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Tag != "!!merge" {
			p := yamlcheck.Join(path, k.Value)
			set(x.key(k, path), x.node(v, p), true, nil)
			continue
		}
		p := yamlcheck.Join(path, k.Value)
		sources := []*yaml.Node{v}
		if target := resolveAlias(v); target.Kind == yaml.SequenceNode {
			sources = target.Content
		}
		// The first of a list wins: merge the others first.
		for j := len(sources) - 1; j >= 0; j-- {
			m := x.node(sources[j], p)
			if x.failed {
				return nil
			}
			if m.Kind != yaml.MappingNode {
				x.fail(sources[j], p, "want a mapping (or a list of mappings) to merge, got %s", yamlcheck.Describe(m))
				return nil
			}
			for c := 0; c+1 < len(m.Content); c += 2 {
				set(m.Content[c], m.Content[c+1], false, k)
			}
		}
	}
	out := make([]*yaml.Node, 0, 2*len(pairs))
	for _, p := range pairs {
		out = append(out, p.k, p.v)
	}
	return out
}

// rateLimitKey is the field that envoyproxy/ratelimit decodes into a
// pointer to a struct (YamlDescriptor.RateLimit), the only one of its
// format whose later value yaml.v2 merges into the earlier one. It is a
// field of descriptors only; elsewhere the decoder refuses it as unknown.
const rateLimitKey = "rate_limit"

// overlay returns the value of the key k of a mapping that sets k to old
// and then to v (a merge key's value, or one written after it): v, but
// for two rate_limit mappings, old's pairs with v's written over them, as
// yaml.v2 decodes v into the struct that it decoded old into. The result
// is placed where v is written; a key that v or old holds twice stays
// twice, for the decoder to refuse.
func (x *expander) overlay(k, old, v *yaml.Node) *yaml.Node {
	if k.Value != rateLimitKey || old.Kind != yaml.MappingNode || v.Kind != yaml.MappingNode {
		return v
	}
	content := slices.Clone(old.Content)
	at := map[string]int{} // key of old → index in content
	for i := 0; i+1 < len(content); i += 2 {
		if content[i].Kind == yaml.ScalarNode {
			at[content[i].Value] = i
		}
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		if j, ok := at[v.Content[i].Value]; ok && v.Content[i].Kind == yaml.ScalarNode {
			content[j], content[j+1] = v.Content[i], v.Content[i+1]
			delete(at, v.Content[i].Value)
			continue
		}
		content = append(content, v.Content[i], v.Content[i+1])
	}
	out := *v
	out.Content = content
	size := 1
	for _, c := range content {
		size += x.sizes[c]
	}
	x.sizes[&out] = size
	return &out
}

// key returns the expansion of the key k of the mapping at path, placed
// where k is written: an
// alias (*name :) stands for its anchor's scalar, as yaml.v2 reads it, and
// an alias of a mapping or a list, which names no field, is refused.
func (x *expander) key(k *yaml.Node, path string) *yaml.Node {
	if k.Kind != yaml.AliasNode {
		return x.node(k, yamlcheck.Join(path, k.Value))
	}
	path = yamlcheck.Join(path, "*"+k.Value)
	out := x.node(k, path)
	if x.failed {
		return k
	}
	if out.Kind != yaml.ScalarNode {
		return x.fail(k, path, "a key written as an alias of %s, which names no field", yamlcheck.Describe(out))
	}
	at := *out
	at.Line, at.Column = k.Line, k.Column
	x.sizes[&at] = x.sizes[out]
	return &at
}

// resolveAlias returns the node n stands for: its anchor's, for an alias.
func resolveAlias(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}
