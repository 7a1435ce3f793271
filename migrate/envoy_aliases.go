package migrate

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// envoyproxy/ratelimit reads its rules files with gopkg.in/yaml.v2, and
// sluice's Envoy service (package envoy) expands anchors, aliases and merge
// keys as yaml.v2 reads them before it reads a descriptor. The import reads
// a rules file the same way, so that the rules it lists, and the
// descriptors the shadow import writes shadow_mode in, are the service's:
// an alias (*name) stands for the node its anchor (&name) marks; a merge
// key (<<: *name, or <<: [*a, *b]) sets the keys of the mappings it names,
// as if written there, a key written later in the mapping winning over a
// merged one and the first of a list of merged mappings over the others; a
// key written before a merge key that also sets it is refused (yaml.v2
// keeps the merged value, YAML 1.2 readers the written one); and a
// descriptor's later rate_limit mapping changes only the fields it names of
// the earlier one, as yaml.v2 decodes both into one struct. The import
// may not depend on package envoy (docs/architecture.md), so this is the
// same expansion as envoy's, written for the import.

// maxEnvoyExpandedNodes bounds the nodes of a rules file once its aliases
// are expanded, as the service bounds them, so that a small file of
// aliases of aliases cannot make the import walk an exponentially large
// tree.
const maxEnvoyExpandedNodes = 1 << 21

// envoyExpander expands the aliases and merge keys of one document.
type envoyExpander struct {
	source string // names the file in errors
	// done maps each node expanded to its expansion; sizes holds the node
	// count of each expansion, aliases expanded; written maps each
	// expansion back to the node of the file it expands, where the keys of
	// a mapping's own level are written.
	done    map[*yaml.Node]*yaml.Node
	sizes   map[*yaml.Node]int
	written map[*yaml.Node]*yaml.Node
	// open holds the nodes being expanded: an alias of one of them is an
	// alias of a node that contains it.
	open map[*yaml.Node]bool
	// err is the first problem: the expansion stops there.
	err error
}

func newEnvoyExpander(source string) *envoyExpander {
	return &envoyExpander{source: source, done: map[*yaml.Node]*yaml.Node{}, sizes: map[*yaml.Node]int{},
		written: map[*yaml.Node]*yaml.Node{}, open: map[*yaml.Node]bool{}}
}

func (x *envoyExpander) fail(n *yaml.Node, format string, args ...any) *yaml.Node {
	if x.err == nil {
		x.err = fmt.Errorf("%s:%d: %s", x.source, n.Line, fmt.Sprintf(format, args...))
	}
	return n
}

// node returns the expansion of n (n itself when it holds no alias and no
// merge key).
func (x *envoyExpander) node(n *yaml.Node) *yaml.Node {
	if x.err != nil {
		return n
	}
	if n.Kind == yaml.AliasNode {
		switch {
		case n.Alias == nil:
			return x.fail(n, "alias *%s names no anchor", n.Value)
		case x.open[n.Alias]:
			return x.fail(n, "alias *%s is inside the node its anchor marks", n.Value)
		}
		return x.node(n.Alias)
	}
	if out, ok := x.done[n]; ok {
		return out
	}
	if len(n.Content) == 0 {
		x.done[n], x.sizes[n], x.written[n] = n, 1, n
		return n
	}
	x.open[n] = true
	defer delete(x.open, n)
	var content []*yaml.Node
	if n.Kind == yaml.MappingNode {
		content = x.mapping(n)
	} else {
		content = make([]*yaml.Node, len(n.Content))
		for i, c := range n.Content {
			content[i] = x.node(c)
		}
	}
	if x.err != nil {
		return n
	}
	size := 1
	for _, c := range content {
		size += x.sizes[c]
	}
	if size > maxEnvoyExpandedNodes {
		return x.fail(n, "its aliases expand to more than %d YAML nodes", maxEnvoyExpandedNodes)
	}
	out := n
	if !slices.Equal(content, n.Content) {
		cp := *n
		cp.Content = content
		out = &cp
	}
	x.done[n], x.sizes[out], x.written[out] = out, size, n
	return out
}

// mapping returns the keys and values of the mapping n, its merge keys
// replaced by the keys they set.
func (x *envoyExpander) mapping(n *yaml.Node) []*yaml.Node {
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
			// A key written twice stays twice, as in the file.
			at[k.Value] = len(pairs)
			pairs = append(pairs, pair{k, v, written})
		case written:
			pairs[i] = pair{k, x.overlay(k, pairs[i].v, v), written}
		case pairs[i].written:
			x.fail(pairs[i].k, "%s is set before the merge key on line %d, which sets it too: move it after the merge key (envoyproxy/ratelimit keeps the merged value, YAML 1.2 the written one)",
				k.Value, mergeKey.Line)
		default:
			pairs[i] = pair{k, x.overlay(k, pairs[i].v, v), written}
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !isMergeKey(k) {
			set(x.key(k), x.node(v), true, nil)
			continue
		}
		sources := []*yaml.Node{v}
		if target := resolveEnvoyAlias(v); target.Kind == yaml.SequenceNode {
			sources = target.Content
		}
		// The first of a list wins: merge the others first.
		for j := len(sources) - 1; j >= 0; j-- {
			m := x.node(sources[j])
			if x.err != nil {
				return nil
			}
			if m.Kind != yaml.MappingNode {
				x.fail(sources[j], "want a mapping (or a list of mappings) to merge")
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

// overlay returns the value of the key k of a mapping that sets k to old
// and then to v (a merge key's value, or one written after it): v, but
// for two rate_limit mappings, old's pairs with v's written over them, as
// yaml.v2 decodes v into the struct that it decoded old into.
func (x *envoyExpander) overlay(k, old, v *yaml.Node) *yaml.Node {
	if k.Value != "rate_limit" || old.Kind != yaml.MappingNode || v.Kind != yaml.MappingNode {
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

// key returns the expansion of the mapping key k: an alias (*name :)
// stands for its anchor's scalar, as yaml.v2 reads it; an alias of a
// mapping or a list names no field and is refused.
func (x *envoyExpander) key(k *yaml.Node) *yaml.Node {
	if k.Kind != yaml.AliasNode {
		return x.node(k)
	}
	out := x.node(k)
	if x.err != nil {
		return k
	}
	if out.Kind != yaml.ScalarNode {
		return x.fail(k, "a key written as an alias of a mapping or a list, which names no field")
	}
	at := *out
	at.Line, at.Column = k.Line, k.Column
	x.sizes[&at] = x.sizes[out]
	return &at
}

// isMergeKey reports whether the mapping key k, as written, is a merge key
// (<<).
func isMergeKey(k *yaml.Node) bool { return k.Kind == yaml.ScalarNode && k.Tag == "!!merge" }

// resolveEnvoyAlias returns the node n stands for: its anchor's, for an
// alias.
func resolveEnvoyAlias(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// envoyTrue reports whether n (nil: unset), an expanded scalar, is true as
// envoyproxy/ratelimit's yaml.v2 reads a boolean: an unquoted true, yes,
// on or y, in lower case, capitalized or upper case.
func envoyTrue(n *yaml.Node) bool {
	const quoted = yaml.DoubleQuotedStyle | yaml.SingleQuotedStyle | yaml.LiteralStyle | yaml.FoldedStyle | yaml.TaggedStyle
	return n != nil && n.Kind == yaml.ScalarNode && n.Style&quoted == 0 && envoyTrues[n.Value]
}

// envoyTrues are the true booleans of YAML 1.1, as yaml.v2 resolves them.
var envoyTrues = func() map[string]bool {
	m := map[string]bool{}
	for _, s := range []string{"y", "yes", "true", "on"} {
		m[s], m[strings.ToUpper(s[:1])+s[1:]], m[strings.ToUpper(s)] = true, true, true
	}
	return m
}()

// eachEnvoyDescriptor calls f for each descriptor of the expanded rules
// document root, down to the depth the import reads, once each however
// many places aliases put it in.
func eachEnvoyDescriptor(root *yaml.Node, f func(d *yaml.Node)) {
	seen := map[*yaml.Node]bool{}
	var walk func(list *yaml.Node, depth int)
	walk = func(list *yaml.Node, depth int) {
		if list == nil || list.Kind != yaml.SequenceNode || depth > maxEnvoyDepth || seen[list] {
			return
		}
		seen[list] = true
		for _, d := range list.Content {
			if d.Kind != yaml.MappingNode || seen[d] {
				continue
			}
			seen[d] = true
			f(d)
			walk(mapValue(d, "descriptors"), depth+1)
		}
	}
	walk(mapValue(root, "descriptors"), 0)
}

// hasEnvoyRule reports whether the expanded descriptor d has a rule: a
// rate_limit mapping (a null rate_limit is none).
func hasEnvoyRule(d *yaml.Node) bool {
	rl := mapValue(d, "rate_limit")
	return rl != nil && rl.Kind == yaml.MappingNode
}
