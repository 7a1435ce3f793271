// Package yamlexpand expands the anchors, aliases and merge keys of a YAML
// node tree as gopkg.in/yaml.v2 reads them, for the readers of files that
// envoyproxy/ratelimit reads with yaml.v2: sluice's Envoy service (package
// envoy) and the import of those files (package migrate).
//
// An alias (*name) stands for the node its anchor (&name) marks, and a
// merge key (<<: *name, or <<: [*a, *b]) sets the keys of the mappings it
// names, as if written there. Where a merged mapping and a key written in
// the mapping both set a key, the one that comes later in the mapping is
// the value (the first of a list of merged mappings wins over the others),
// as yaml.v2 decides; a key written before a merge key that also sets it
// is an error, because YAML 1.2 readers (and so other tools reading the
// same file) keep the written one instead. The keys that Options.Overlaid
// names are the exception: a later mapping of such a key changes only the
// keys it sets of the earlier mapping and keeps the others, as yaml.v2
// does when it decodes both into one pointer to a struct; a later value
// that is not a mapping (null) replaces it. A merge key's value is a
// mapping, an alias of one, or a list, written in place, of mappings and
// aliases of mappings: an alias of a list is an error, as in yaml.v2. An
// alias used as a key stands for its anchor's scalar; an alias of a
// mapping or a list as a key, an alias that names no anchor and one inside
// the node its anchor marks are errors, and so is a key longer than
// MaxKeyBytes, written or given by an alias. A key tagged !!binary is the
// text its base64 encodes, as yaml.v2 reads it (see Expander.key), and the
// path of its value names that text. A scalar, key or value, tagged with a
// type that its text is not (yamlcheck.YAML11Mistagged: `value: !!null
// alice`, `!!int key: user`) is an error, as yaml.v2 refuses it wherever
// it stands. A key written twice in a mapping stays twice, as written, for
// the reader to refuse. A document
// whose aliases expand to more than MaxNodes nodes is an error, so that a
// small file of aliases of aliases cannot make its reader walk an
// exponentially large tree; so is one whose aliases and merge keys copy
// more values than its size allows (see Expander.Expand), so that a file
// merging one large mapping many times cannot make the expansion take
// time growing with the square of its size.
package yamlexpand

import (
	"encoding/base64"
	"fmt"
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/internal/yamlcheck"
)

// MaxNodes bounds the nodes of one document once its aliases are
// expanded.
const MaxNodes = 1 << 21

// yaml11Kinds names the types of YAML 1.1 texts (see
// yamlcheck.YAML11Mistagged).
var yaml11Kinds = map[string]string{"!!null": "null", "!!bool": "boolean", "!!int": "integer",
	"!!float": "float", "!!timestamp": "timestamp", "!!merge": "merge key", "!!str": "string"}

// MaxDescriptorText bounds the bytes of the keys and values of the
// descriptors of one rules file, each counted at every place it stands:
// an alias of a long key in many descriptors counts its bytes in each, as
// envoyproxy/ratelimit copies them into each, and as its readers hold
// them in each.
const MaxDescriptorText = 1 << 30

// MaxKeyBytes bounds the text of a mapping key. The fields of the files
// these readers read are named in at most 17 bytes (requests_per_unit),
// and envoyproxy/ratelimit refuses a key that names none of them, anywhere
// in the file; a longer key is refused where it is written, or where an
// alias makes it a key, so that aliases and merge keys repeating a long
// key cannot make its reader pay for its length at every place they put
// it.
const MaxKeyBytes = 1024

// Options says how a reader expands its documents.
type Options struct {
	// Overlaid names the keys whose later mapping, in one mapping, is
	// written over the earlier one rather than replacing it (see the
	// package comment).
	Overlaid []string
	// Report is called with each problem found: the node it is at, its
	// field path (nil for the document; an alias used as a key is named
	// *name; its String is written as yamlcheck.Join writes one) and what
	// it is, a message naming neither. The expansion stops at the first
	// problem, but a merged mapping's keys written before the merge key
	// are each reported, so that a receiver which lists only some problems
	// should write out the paths of those only. Nil: Expand reports only
	// that there was a problem.
	Report func(n *yaml.Node, path *yamlcheck.Path, msg string)
}

// An Expander expands the aliases and merge keys of one document. It is
// not safe for concurrent use.
type Expander struct {
	opts Options
	// done maps each node expanded to its expansion; sizes holds the node
	// count of each expansion, aliases expanded; written maps each
	// expansion back to the node of the document it expands; decodes
	// holds, for each node of the document expanded, the nodes yaml.v2
	// decodes for it (see decodeCount).
	done    map[*yaml.Node]*yaml.Node
	sizes   map[*yaml.Node]int
	written map[*yaml.Node]*yaml.Node
	decodes map[*yaml.Node]int
	// built holds the mappings that overlay built.
	built map[*yaml.Node]bool
	// texts maps each key scalar tagged !!merge or !!binary to the text it
	// is (see Expander.key).
	texts map[*yaml.Node]*yaml.Node
	// open holds the nodes being expanded: an alias of one of them is an
	// alias of a node that contains it.
	open map[*yaml.Node]bool
	// copies counts the values the expansion has copied so far, which
	// budget bounds for a document of size nodes (see Expand).
	copies, budget, size int
	// failed is set once a problem is reported: the expansion stops there.
	failed bool
}

// New returns an Expander for one document.
func New(opts Options) *Expander {
	return &Expander{opts: opts, done: map[*yaml.Node]*yaml.Node{}, sizes: map[*yaml.Node]int{},
		written: map[*yaml.Node]*yaml.Node{}, decodes: map[*yaml.Node]int{},
		built: map[*yaml.Node]bool{}, open: map[*yaml.Node]bool{}, texts: map[*yaml.Node]*yaml.Node{}}
}

// Expand returns doc with its aliases and merge keys expanded, and true;
// or false after reporting why it cannot be. doc is not changed: the
// expansion shares the nodes that hold no alias and no merge key with it,
// and copies the others.
//
// The work of the expansion, and of reading it, is bounded by the size of
// doc as written, as gopkg.in/yaml.v2 bounds the decoding its aliases
// cause ("document contains excessive aliasing"). As yaml.v2 counts them,
// the nodes of doc are those it decodes: every node but a merge key and
// the list written after one. An alias copies every node yaml.v2 decodes
// for its anchor's value: the value's nodes, each alias within counted as
// one node and the nodes it copies, so that an alias of a list of aliases
// of lists copies all the lists; a merge key copies, for each mapping it
// names, what an alias of it copies, and for each mapping written in its
// list, the keys it sets; and a mapping of a key that Options.Overlaid
// names, written over a mapping that such overlays built, copies the keys
// of the one built (those of any other mapping are counted where it is
// written or copied). A document of n nodes may copy CopyBudget(n)
// values.
func (x *Expander) Expand(doc *yaml.Node) (*yaml.Node, bool) {
	x.size = written(doc)
	x.budget = CopyBudget(x.size)
	out := x.node(doc, nil)
	return out, !x.failed
}

// CopyBudget returns how many values (see Expander.Expand) the expansion
// of a document of n nodes, as written, may copy. It is yaml.v2's bound on
// the nodes that aliases make it decode again, with the copies in their
// place: of the total of the document's nodes and the copies, the copies
// may be 99% up to a total of 400,000, a share falling evenly to 10% at a
// total of 4,000,000 and beyond; 100 copies, and a total of 1,000, are
// always allowed. So the budget grows with n: 99n while that keeps the
// total within 400,000, n/9 once n is 3,600,000 or more.
func CopyBudget(n int) int {
	allowed := func(copies int) bool {
		total := float64(n + copies)
		return copies <= 100 || total <= 1000 || float64(copies)/total <= aliasShare(total)
	}
	// allowed is true up to the budget and false past it; it is false at
	// 99n+1100, where the copies are more than 99% of the total.
	lo, hi := 0, 99*n+1100
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if allowed(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// aliasShare is the share of a total of nodes decoded that yaml.v2 lets
// aliases make (decode.go's allowedAliasRatio).
func aliasShare(total float64) float64 {
	const low, high = 400_000, 4_000_000
	switch {
	case total <= low:
		return 0.99
	case total >= high:
		return 0.10
	}
	return 0.99 - 0.89*(total-low)/(high-low)
}

// written returns the number of nodes of n as written that yaml.v2
// decodes (see Expander.Expand), aliases counted once each and not
// followed.
func written(n *yaml.Node) int { return 1 + decoded(n, written) }

// decoded returns the sum of count over the nodes of n's content that
// yaml.v2 decodes when it decodes n: all of them, but for a merge key
// only the value after it, and for a list written there only its items.
func decoded(n *yaml.Node, count func(*yaml.Node) int) int {
	sum := 0
	for i := 0; i < len(n.Content); i++ {
		c := n.Content[i]
		if n.Kind != yaml.MappingNode || i%2 == 1 || i+1 == len(n.Content) || !IsMergeKey(c) {
			sum += count(c)
			continue
		}
		i++
		if v := n.Content[i]; v.Kind == yaml.SequenceNode {
			for _, m := range v.Content {
				sum += count(m)
			}
		} else {
			sum += count(v)
		}
	}
	return sum
}

// decodeCount returns the nodes yaml.v2 decodes for the node n of the
// document, already expanded: an alias is one node and its anchor's.
func (x *Expander) decodeCount(n *yaml.Node) int {
	if n.Kind == yaml.AliasNode {
		return 1 + x.decodes[n.Alias]
	}
	return x.decodes[n]
}

// copied counts values copied at the node at, at path, and reports
// whether the copies so far are within the budget; the first time they are
// not, it reports the problem there.
func (x *Expander) copied(values int, at *yaml.Node, path *yamlcheck.Path) bool {
	was := x.copies
	x.copies += values
	if x.copies <= x.budget {
		return true
	}
	if was <= x.budget {
		x.fail(at, path, "the document's aliases and merge keys copy more than %d values by here, the most a document of %d YAML nodes may (gopkg.in/yaml.v2 refuses it too: excessive aliasing)", x.budget, x.size)
	}
	return false
}

// Written returns the node of the document that the node n of its
// expansion expands (a mapping merged or aliased in many places expands
// one node written once), or nil if n is none. A mapping's expansion
// holds the keys written at its own level, merge keys included.
func (x *Expander) Written(n *yaml.Node) *yaml.Node { return x.written[n] }

// fail reports the problem at n, at path, and stops the expansion.
func (x *Expander) fail(n *yaml.Node, path *yamlcheck.Path, format string, args ...any) *yaml.Node {
	x.failed = true
	if x.opts.Report != nil {
		x.opts.Report(n, path, fmt.Sprintf(format, args...))
	}
	return n
}

// node returns the expansion of n (n itself when it holds no alias and no
// merge key), at path.
func (x *Expander) node(n *yaml.Node, path *yamlcheck.Path) *yaml.Node {
	if x.failed {
		return n
	}
	if n.Kind == yaml.AliasNode {
		return x.alias(n, n, path)
	}
	if out, ok := x.done[n]; ok {
		return out
	}
	if len(n.Content) == 0 {
		if is, bad := yamlcheck.YAML11Mistagged(n); bad {
			text := yamlcheck.Describe(&yaml.Node{Kind: yaml.ScalarNode, Value: n.Value})
			return x.fail(n, path, "%s tagged %s, which is a %s to YAML 1.1, not a %s (envoyproxy/ratelimit refuses it too): remove the tag", text, n.Tag, yaml11Kinds[is], yaml11Kinds[n.Tag])
		}
		x.done[n], x.sizes[n], x.written[n], x.decodes[n] = n, 1, n, 1
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
				p = path.Index(i)
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
	if size > MaxNodes {
		return x.fail(n, path, "its aliases expand to more than %d YAML nodes", MaxNodes)
	}
	out := n
	if !slices.Equal(content, n.Content) {
		cp := *n
		cp.Content = content
		out = &cp
	}
	x.done[n], x.sizes[out], x.written[out] = out, size, n
	x.decodes[n] = 1 + decoded(n, x.decodeCount)
	return out
}

// alias returns the expansion of the alias n, at path, and counts what it
// copies (see Expander.Expand) at the node at: the alias itself, or the
// merge key whose list names it.
func (x *Expander) alias(n, at *yaml.Node, path *yamlcheck.Path) *yaml.Node {
	switch {
	case n.Alias == nil:
		return x.fail(n, path, "alias *%s names no anchor", n.Value)
	case x.open[n.Alias]:
		return x.fail(n, path, "alias *%s is inside the node its anchor marks", n.Value)
	}
	out := x.node(n.Alias, path)
	if x.failed || !x.copied(x.decodes[n.Alias], at, path) {
		return n
	}
	return out
}

// mapping returns the keys and values of the mapping n, its merge keys
// replaced by the keys they set; path names n.
func (x *Expander) mapping(n *yaml.Node, path *yamlcheck.Path) []*yaml.Node {
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
			// A key written twice stays twice, for the reader to refuse.
			at[k.Value] = len(pairs)
			pairs = append(pairs, pair{k, v, written})
		case written:
			pairs[i] = pair{k, x.overlay(k, pairs[i].v, v, path), written}
		case pairs[i].written:
			x.fail(pairs[i].k, path.Key(k.Value),
				"set before the merge key on line %d, which sets it too: move it after the merge key (envoyproxy/ratelimit keeps the merged value, YAML 1.2 the written one)",
				mergeKey.Line)
		default:
			pairs[i] = pair{k, x.overlay(k, pairs[i].v, v, path), written}
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !IsMergeKey(k) {
			// The value's path names the key as read: a key tagged
			// !!binary by the text it encodes, an alias by its anchor's.
			key := x.key(k, path)
			set(key, x.node(v, path.Key(key.Value)), true, nil)
			continue
		}
		p := path.Key(k.Value)
		// A list written here lists the mappings to merge; an alias must
		// name a mapping, as yaml.v2 merges no aliased list.
		sources := []*yaml.Node{v}
		if v.Kind == yaml.SequenceNode {
			sources = v.Content
		}
		// The first of a list wins: merge the others first.
		for j := len(sources) - 1; j >= 0; j-- {
			// An alias copies the mapping it names as it copies any value;
			// a mapping written here copies only the keys it sets.
			var m *yaml.Node
			copies := 0
			if sources[j].Kind == yaml.AliasNode {
				m = x.alias(sources[j], k, p)
			} else {
				m = x.node(sources[j], p)
				copies = len(m.Content) / 2
			}
			if x.failed {
				return nil
			}
			switch {
			case m.Kind == yaml.SequenceNode && sources[j].Kind == yaml.AliasNode:
				x.fail(sources[j], p, "want a mapping (or a list of mappings) to merge, got an alias of a list (*%s), which is not merged: write the list after the merge key, or alias its mappings", sources[j].Value)
				return nil
			case m.Kind != yaml.MappingNode:
				x.fail(sources[j], p, "want a mapping (or a list of mappings) to merge, got %s", yamlcheck.Describe(m))
				return nil
			case !x.copied(copies, k, p):
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
// for two mappings of a key that Options.Overlaid names, old's pairs with
// v's written over them. The result is placed where v is written; a key
// that v or old holds twice stays twice, for the reader to refuse. path
// names the mapping.
func (x *Expander) overlay(k, old, v *yaml.Node, path *yamlcheck.Path) *yaml.Node {
	if old.Kind != yaml.MappingNode || v.Kind != yaml.MappingNode || !slices.Contains(x.opts.Overlaid, k.Value) {
		return v
	}
	if x.built[old] && !x.copied(len(old.Content)/2, k, path.Key(k.Value)) {
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
	x.sizes[&out], x.built[&out] = size, true
	return &out
}

// key returns the expansion of the key k of the mapping at path, placed
// where k is written: an alias (*name :) stands for its anchor's scalar,
// as yaml.v2 reads it, and an alias of a mapping or a list, which names no
// field, is refused, as is a key, written or aliased, longer than
// MaxKeyBytes. A key other than << tagged !!merge (see IsMergeKey) is its
// text, tagged !!str, as yaml.v2 reads it; so is a key tagged !!binary,
// whose text is the bytes its base64 (encoding/base64's StdEncoding, line
// breaks in it ignored) encodes, decoded once however many aliases repeat
// it: !!binary a2V5 is the key "key". A key tagged !!binary that is not
// base64 is refused, as yaml.v2 refuses it.
func (x *Expander) key(k *yaml.Node, path *yamlcheck.Path) *yaml.Node {
	if k.Kind != yaml.AliasNode {
		p := path.Key(k.Value)
		out := x.node(k, p)
		switch {
		case x.failed:
			return k
		case out.Kind == yaml.ScalarNode && len(out.Value) > MaxKeyBytes:
			return x.fail(k, p, "a key of %d bytes, which names no field (none is named in more than %d; envoyproxy/ratelimit refuses it too, as an unknown key)", len(out.Value), MaxKeyBytes)
		case out.Kind != yaml.ScalarNode || out.Tag != "!!merge" && out.Tag != "!!binary":
			return out
		}
		return x.text(out, k, p)
	}
	path = path.Key("*" + k.Value)
	out := x.node(k, path)
	if x.failed {
		return k
	}
	switch {
	case out.Kind != yaml.ScalarNode:
		return x.fail(k, path, "a key written as an alias of %s, which names no field", yamlcheck.Describe(out))
	case len(out.Value) > MaxKeyBytes:
		return x.fail(k, path, "a key written as an alias of a text of %d bytes, which names no field (none is named in more than %d; envoyproxy/ratelimit refuses it too, as an unknown key)", len(out.Value), MaxKeyBytes)
	}
	if out.Tag == "!!merge" || out.Tag == "!!binary" {
		if out = x.text(out, k, path); x.failed {
			return k
		}
	}
	at := *out
	at.Line, at.Column = k.Line, k.Column
	x.sizes[&at] = x.sizes[out]
	return &at
}

// text returns the key scalar n, tagged !!merge or !!binary, as the text
// it is (see Expander.key), tagged !!str: one node for n however many
// aliases make it a key. k and path are where n is a key, for a problem.
func (x *Expander) text(n, k *yaml.Node, path *yamlcheck.Path) *yaml.Node {
	if t, ok := x.texts[n]; ok {
		return t
	}
	t := *n
	t.Tag = "!!str"
	if n.Tag == "!!binary" {
		b, err := base64.StdEncoding.DecodeString(n.Value)
		if err != nil {
			return x.fail(k, path, "a key tagged !!binary, but %s is not base64 (envoyproxy/ratelimit refuses it too)", yamlcheck.Describe(n))
		}
		t.Value = string(b)
	}
	x.sizes[&t], x.texts[n] = x.sizes[n], &t
	return &t
}

// IsMergeKey reports whether the mapping key k, as written, is a merge key:
// the text << written plain or tagged !!merge, as yaml.v2 reads one. A key
// of other text is that text, tagged !!merge or not ("<<" quoted is the
// text <<, too).
func IsMergeKey(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Tag == "!!merge" && k.Value == "<<"
}

// Resolve returns the node n stands for: its anchor's, for an alias (of an
// alias…), n itself otherwise.
func Resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}
