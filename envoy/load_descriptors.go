package envoy

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"io"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/yamlcheck"
	"github.com/sluice-dev/sluice/internal/yamlexpand"
)

// descriptors decodes a list of descriptors into the children of parent,
// whose place in the tree is at.
func (d *decoder) descriptors(n *yaml.Node, path *yamlcheck.Path, parent *node, at *place) {
	lines := map[[2]*text]int{} // key and value (nil: none) → line
	d.ListAt(n, path, func(_ int, e *yaml.Node, path *yamlcheck.Path) {
		var (
			key, value                             string
			keyNode, valueNode, rlNode, shadowNode *yaml.Node
			quotaNode, shareNode, childrenNode     *yaml.Node
			childrenPath                           *yamlcheck.Path
			shadow, quota, share                   bool
			rl                                     rawRateLimit
			child                                  = &node{}
		)
		ok := d.MappingAt(e, path, map[string]yamlcheck.FieldAt{
			"key":   func(n *yaml.Node, p *yamlcheck.Path) { key, keyNode = d.str(n, p), n },
			"value": func(n *yaml.Node, p *yamlcheck.Path) { value, valueNode = d.optionalStr(n, p), n },
			"rate_limit": func(n *yaml.Node, p *yamlcheck.Path) {
				rlNode = n
				d.rateLimit(n, p, &rl)
			},
			"shadow_mode": func(n *yaml.Node, p *yamlcheck.Path) { shadow, shadowNode = d.boolAt(n, p), n },
			"quota_mode":  func(n *yaml.Node, p *yamlcheck.Path) { quota, quotaNode = d.boolAt(n, p), n },
			"share_threshold": func(n *yaml.Node, p *yamlcheck.Path) {
				share, shareNode = d.boolAt(n, p), n
			},
			// detailed_metric and value_to_metric change envoyproxy/ratelimit's
			// statsd names; sluice labels metrics by limit name only (bounded
			// cardinality), so they have no effect.
			"detailed_metric": func(n *yaml.Node, p *yamlcheck.Path) { d.boolAt(n, p) },
			"value_to_metric": func(n *yaml.Node, p *yamlcheck.Path) { d.boolAt(n, p) },
			"descriptors":     func(n *yaml.Node, p *yamlcheck.Path) { childrenNode, childrenPath = n, p },
		})
		if !ok {
			return
		}
		switch {
		case keyNode == nil:
			d.ErrorfAt(e, path.Key("key"), "missing")
			return
		case key == "":
			d.ErrorfAt(keyNode, path.Key("key"), "must not be empty")
			return
		}
		if !at.read(d, len(key)+len(value), e, path) {
			return
		}
		ent := entry{key, value}
		// Equal texts are one *text: comparing them costs nothing, however
		// long they are and however often an alias repeats them.
		var texts [2]*text
		texts[0] = at.text(keyNode, key)
		if value != "" {
			texts[1] = at.text(valueNode, value)
		}
		if line, dup := lines[texts]; dup {
			what := "key " + shown(key)
			if value != "" {
				what += " with value " + shown(value)
			}
			d.ErrorfAt(keyNode, path.Key("key"), "%s is already a descriptor of this list (line %d)", what, line)
			return
		}
		lines[texts] = keyNode.Line
		here := at.child(texts[0], texts[1])
		if rlNode != nil && rlNode.Kind == yaml.MappingNode {
			child.rule = d.rule(&rl, rlNode, path.Key("rate_limit"), shadow, quota, here)
		} else {
			if shadow {
				d.ErrorfAt(shadowNode, path.Key("shadow_mode"), "has no effect without a rate_limit")
			}
			if quota {
				d.ErrorfAt(quotaNode, path.Key("quota_mode"), "has no effect without a rate_limit")
			}
		}
		if share {
			// envoyproxy/ratelimit's wildcards: a value ending in "*", or a
			// key ending in "*" without a value (its pattern is the key).
			child.shared = value
			if value == "" {
				child.shared = key
			}
			if !strings.HasSuffix(child.shared, "*") {
				d.ErrorfAt(shareNode, path.Key("share_threshold"),
					"applies only to a value ending in *, or a key ending in * without a value (all the entries it matches share one limit)")
			}
		}
		if childrenNode != nil {
			d.descriptors(childrenNode, childrenPath, child, here)
		}
		switch {
		case value == "" && strings.HasSuffix(key, "*"):
			parent.prefix = append(parent.prefix, prefixChild{prefix: strings.TrimSuffix(key, "*"), n: child, joined: true})
		case value == "":
			if parent.wildcard == nil {
				parent.wildcard = map[string]*node{}
			}
			parent.wildcard[key] = child
		case strings.HasSuffix(value, "*"):
			parent.prefix = append(parent.prefix, prefixChild{key: key, prefix: strings.TrimSuffix(value, "*"), n: child})
		default:
			if parent.exact == nil {
				parent.exact = map[entry]*node{}
			}
			parent.exact[ent] = child
		}
	})
}

// rawRateLimit is a rate_limit block as written; a nil node means unset.
type rawRateLimit struct {
	unit, name, algorithm                     string
	requestsPerUnit, burst                    int64
	unlimited                                 bool
	maxWait                                   time.Duration
	replaces                                  []string
	replaceNodes                              []*yaml.Node
	replacePaths                              []*yamlcheck.Path
	unitNode, rpuNode, unlimitedNode          *yaml.Node
	nameNode, algNode, burstNode, maxWaitNode *yaml.Node
}

func (d *decoder) rateLimit(n *yaml.Node, path *yamlcheck.Path, rl *rawRateLimit) {
	d.MappingAt(n, path, map[string]yamlcheck.FieldAt{
		"unit": func(n *yaml.Node, p *yamlcheck.Path) { rl.unit, rl.unitNode = d.str(n, p), n },
		"requests_per_unit": func(n *yaml.Node, p *yamlcheck.Path) {
			rl.requestsPerUnit, rl.rpuNode = d.IntAt(n, p, 0, 1<<32-1), n
		},
		"unlimited": func(n *yaml.Node, p *yamlcheck.Path) { rl.unlimited, rl.unlimitedNode = d.boolAt(n, p), n },
		"name":      func(n *yaml.Node, p *yamlcheck.Path) { rl.name, rl.nameNode = d.optionalStr(n, p), n },
		"replaces": func(n *yaml.Node, p *yamlcheck.Path) {
			d.ListAt(n, p, func(_ int, e *yaml.Node, p *yamlcheck.Path) {
				var name string
				nameNode := e
				if !d.MappingAt(e, p, map[string]yamlcheck.FieldAt{
					"name": func(n *yaml.Node, p *yamlcheck.Path) { name, nameNode = d.str(n, p), n },
				}) {
					return
				}
				if name == "" {
					d.ErrorfAt(nameNode, p.Key("name"), "must name the limit to replace")
					return
				}
				rl.replaces = append(rl.replaces, name)
				rl.replaceNodes = append(rl.replaceNodes, nameNode)
				rl.replacePaths = append(rl.replacePaths, p.Key("name"))
			})
		},
		// sluice extensions.
		"algorithm": func(n *yaml.Node, p *yamlcheck.Path) { rl.algorithm, rl.algNode = d.str(n, p), n },
		"burst": func(n *yaml.Node, p *yamlcheck.Path) {
			rl.burst, rl.burstNode = d.IntAt(n, p, 1, sluice.MaxQuantity), n
		},
		"max_wait": func(n *yaml.Node, p *yamlcheck.Path) {
			rl.maxWaitNode = n
			s := d.str(n, p)
			if s == "" {
				return
			}
			v, err := yamlcheck.ParseDuration(s)
			switch {
			case err != nil:
				d.ErrorfAt(n, p, "%q is not a duration (use e.g. 250ms, 2s)", s)
			case v <= 0:
				d.ErrorfAt(n, p, "%q must be positive", s)
			default:
				rl.maxWait = v
			}
		},
	})
}

// rule builds the rule of a rate_limit block of the descriptor at, or nil
// if it is invalid.
func (d *decoder) rule(rl *rawRateLimit, n *yaml.Node, path *yamlcheck.Path, shadow, quota bool, at *place) *rule {
	before := len(d.Errs)
	// quota_mode reports an OVER_LIMIT descriptor as OK and never refuses
	// the request: a shadow limit, reported its own way (shadow_mode, if
	// also set, decides the report, as in envoyproxy/ratelimit).
	r := &rule{name: rl.name, replaces: rl.replaces, shadow: shadow || quota, quota: quota && !shadow, label: rl.name}
	for i, name := range rl.replaces {
		if name == rl.name {
			d.ErrorfAt(rl.replaceNodes[i], rl.replacePaths[i], "a limit cannot replace itself")
		}
	}
	switch {
	case r.label == "":
		r.label = at.name()
	case !sluice.ValidName(r.label):
		// envoyproxy/ratelimit takes any text; sluice's limit names are
		// header tokens and metric labels.
		t := at.text(rl.nameNode, rl.name)
		var c cleaned
		c.add(t)
		r.label = c.name(func() []byte { return t.sum[:] })
	}
	if rl.unlimited {
		r.unlimited = true
		for _, x := range []struct {
			n    *yaml.Node
			name string
		}{{rl.unitNode, "unit"}, {rl.rpuNode, "requests_per_unit"}, {rl.algNode, "algorithm"},
			{rl.burstNode, "burst"}, {rl.maxWaitNode, "max_wait"}} {
			if x.n != nil {
				d.ErrorfAt(x.n, path.Key(x.name), "has no effect on an unlimited rule (remove it or unlimited)")
			}
		}
		return r
	}
	unit, pbUnit, ok := parseUnit(rl.unit)
	switch {
	case rl.unitNode == nil:
		d.ErrorfAt(n, path.Key("unit"), "missing (one of %s)", unitNames())
	case !ok && rl.unit != "":
		d.ErrorfAt(rl.unitNode, path.Key("unit"), "%q is not one of %s", rl.unit, unitNames())
	}
	if rl.rpuNode == nil {
		d.ErrorfAt(n, path.Key("requests_per_unit"), "missing")
	}
	r.unit = pbUnit
	r.unitSeconds = int64(unit / time.Second)
	r.overID = recordID(stateID(sluice.AlgorithmFixedWindow, r.unitSeconds)) // a block list's record is a fixed window's
	r.requestsPerUnit = uint32(rl.requestsPerUnit)
	if rl.requestsPerUnit == 0 && rl.rpuNode != nil {
		r.blocked = true
		for _, x := range []struct {
			n    *yaml.Node
			name string
		}{{rl.algNode, "algorithm"}, {rl.burstNode, "burst"}, {rl.maxWaitNode, "max_wait"}} {
			if x.n != nil {
				d.ErrorfAt(x.n, path.Key(x.name), "has no effect when requests_per_unit is 0 (every request is refused)")
			}
		}
	}
	alg := sluice.AlgorithmFixedWindow
	if rl.algNode != nil && rl.algorithm != "" {
		a, err := sluice.ParseAlgorithm(rl.algorithm)
		if err != nil {
			d.ErrorfAt(rl.algNode, path.Key("algorithm"), "%v", err)
		}
		alg = a
		if a == sluice.AlgorithmConcurrency {
			d.ErrorfAt(rl.algNode, path.Key("algorithm"),
				"concurrency limits work in flight and needs a release when a request ends, which Envoy's rate limit protocol never sends: use a rate algorithm")
		}
	}
	if rl.burstNode != nil && alg != 0 && alg != sluice.AlgorithmTokenBucket && alg != sluice.AlgorithmLeakyBucket && alg != sluice.AlgorithmGCRA {
		d.ErrorfAt(rl.burstNode, path.Key("burst"), "applies only to token-bucket, leaky-bucket and gcra, not %v", alg)
	}
	if rl.maxWaitNode != nil && alg != 0 && alg != sluice.AlgorithmLeakyBucket {
		d.ErrorfAt(rl.maxWaitNode, path.Key("max_wait"), "applies only to leaky-bucket (as a queue), not %v", alg)
	}
	if len(d.Errs) > before {
		return nil
	}
	if r.blocked {
		return r
	}
	r.id = stateID(alg, r.unitSeconds)
	r.limit = sluice.NewLimit(alg, rl.requestsPerUnit, unit).Named(r.label).WithID(r.id).WithShadow(r.shadow).
		WithBurst(rl.burst).WithMaxWait(rl.maxWait)
	if err := r.limit.Err(); err != nil {
		d.ErrorfAt(n, path, "%v", err)
		return nil
	}
	return r.finish()
}

// optionalStr decodes a string that may be written empty (key: with
// nothing after it, ~ or null), which envoyproxy/ratelimit's YAML library
// reads as "" (yamlcheck.Decoder.YAML11OptionalText). Another text tagged
// !!null (!!null alice) is an error, as it is there.
func (d *decoder) optionalStr(n *yaml.Node, path *yamlcheck.Path) string {
	return d.YAML11OptionalText(n, path)
}

// str decodes a string as envoyproxy/ratelimit's YAML library (yaml.v2)
// reads one into a string field (yamlcheck.Decoder.YAML11Text): a scalar
// tagged !!binary is the bytes its base64 encodes, and one whose text is
// not base64 is an error, as it is there. Each scalar is decoded once,
// however many places aliases put it in, and its places share the text.
func (d *decoder) str(n *yaml.Node, path *yamlcheck.Path) string {
	return d.YAML11Text(n, path)
}

// boolAt is Bool with the path as a *yamlcheck.Path. A null (key: with
// nothing after it, ~ or null) is false, as envoyproxy/ratelimit's YAML
// library (yaml.v2) reads a null into a bool field; another text tagged
// !!null is an error, as it is there.
func (d *decoder) boolAt(n *yaml.Node, path *yamlcheck.Path) bool {
	if v, ok := yamlcheck.YAML11Bool(n); ok {
		return v
	}
	if d.NullAt(n, path) {
		return false
	}
	return d.Bool(n, path.String())
}

// maxDescriptorText bounds the bytes of the keys and values of the
// descriptors of one rules file, each counted at every place it stands:
// an alias of a long key in many descriptors counts its bytes in each, as
// envoyproxy/ratelimit copies them into each, and as the rules tree holds
// (and hashes) them in each. `sluice import` applies the same bound.
const maxDescriptorText = yamlexpand.MaxDescriptorText

// maxNameLen is the length of the longest limit name (sluice.ValidName).
const maxNameLen = 64

// maxHashedText is the length of the longest key or value that the path a
// long derived name hashes holds as written (see place.name): a longer one
// stands for its SHA-256, so that a key aliased in many places costs each
// of them a bounded time.
const maxHashedText = 1 << 10

// place is a descriptor's place in its domain's tree, as derived names
// need it. The root (a place without a parent) is the domain's, whose
// path is empty.
type place struct {
	parent *place
	// texts holds the text of each key, value and name node met in the
	// document, and byValue each text by its value (so that equal texts
	// are one), both shared by all its places.
	texts   map[*yaml.Node]*text
	byValue map[string]*text
	// bytes counts the bytes of the file's keys and values read so far
	// (see maxDescriptorText), shared by all the places of the file.
	bytes      *int64
	key, value *text // value nil: none
	path       cleaned
	// sum, once a long name at or below the place needs it, holds the
	// SHA-256 state of the place's path as hashed.
	sum hash.Hash
}

// newPlace returns the root of a domain's tree; bytes counts the bytes of
// its file's keys and values read.
func newPlace(bytes *int64) *place {
	return &place{texts: map[*yaml.Node]*text{}, byValue: map[string]*text{}, bytes: bytes}
}

// read counts the n bytes of the key and value of a descriptor under p
// and reports whether the file's keys and values are within
// maxDescriptorText; the first time they are not, it records the problem
// at the descriptor e, at path.
func (p *place) read(d *decoder, n int, e *yaml.Node, path *yamlcheck.Path) bool {
	was := *p.bytes
	*p.bytes += int64(n)
	if *p.bytes <= maxDescriptorText {
		return true
	}
	if was <= maxDescriptorText {
		d.ErrorfAt(e, path, "the keys and values of the file's descriptors, each counted wherever an alias repeats it, total more than %d bytes by here, the most a rules file may (envoyproxy/ratelimit copies each into every descriptor)", maxDescriptorText)
	}
	return false
}

// child returns the place of the descriptor under p of the key key and
// the value value (nil: none).
func (p *place) child(key, value *text) *place {
	c := &place{parent: p, texts: p.texts, byValue: p.byValue, bytes: p.bytes, key: key, value: value, path: p.path}
	c.path.head = append(make([]byte, 0, maxNameLen+1), p.path.head...)
	if p.parent != nil {
		c.path.push('.')
	}
	c.path.add(key)
	if value != nil {
		c.path.push('_')
		c.path.add(value)
	}
	return c
}

// text returns the text of the scalar n, value as decoder.str decodes it:
// one *text for all the nodes of one value, each cleaned and hashed once.
func (p *place) text(n *yaml.Node, value string) *text {
	if t, ok := p.texts[n]; ok {
		return t
	}
	if t, ok := p.byValue[value]; ok {
		p.texts[n] = t
		return t
	}
	t := &text{hashed: value, sum: sha256.Sum256([]byte(value))}
	for i := 0; i < len(value); i++ {
		c := value[i]
		if !nameByte(c) {
			c = '_'
		}
		t.push(c)
	}
	if len(value) > maxHashedText {
		t.hashed = hex.EncodeToString(t.sum[:])
	}
	p.texts[n], p.byValue[value] = t, t
	return t
}

// name returns the name of a rule at p without rate_limit.name, after its
// path in the tree, e.g. "remote_address.path_login" for key
// remote_address then key path with value /login: a segment "key", or
// "key_value", per level, joined by '.', with every byte outside
// [A-Za-z0-9._-] replaced by '_' and a '_' dropped at the start of a
// segment and after another '_' (a rate_limit.name that is not a sluice
// limit name is made one the same way, as one segment). An empty result
// is "descriptor"; one longer than maxNameLen bytes is cut to 55 and
// suffixed with '-' and 8 hex digits of the SHA-256 of the path as joined
// (of the name, for a rate_limit.name), so that it stays distinct. In the
// path hashed, a key or value longer than maxHashedText bytes stands for
// its own SHA-256, in hex.
//
// Naming costs time bounded by the file: each key and value is cleaned
// and hashed once however many places an alias puts it in, a place keeps
// only the start of its cleaned path, and the SHA-256 state of a place's
// path, once a long name needs it, goes on from its parent's.
func (p *place) name() string {
	return p.path.name(func() []byte { return p.hash().Sum(nil) })
}

// hash returns the SHA-256 state of p's path as hashed, which the caller
// must not change.
func (p *place) hash() hash.Hash {
	if p.sum != nil {
		return p.sum
	}
	if p.parent == nil {
		p.sum = sha256.New()
		return p.sum
	}
	h, err := p.parent.hash().(hash.Cloner).Clone()
	if err != nil {
		panic(err) // crypto/sha256's state always clones
	}
	if p.parent.parent != nil {
		io.WriteString(h, ".")
	}
	io.WriteString(h, p.key.hashed)
	if p.value != nil {
		io.WriteString(h, "_")
		io.WriteString(h, p.value.hashed)
	}
	p.sum = h
	return h
}

// text is a key, value or rate_limit.name as derived names need it.
type text struct {
	cleaned
	// hashed is the text's part of a hashed path: the text itself, or its
	// SHA-256 in hex if it is longer than maxHashedText bytes.
	hashed string
	// sum is the SHA-256 of the text.
	sum [sha256.Size]byte
}

// cleaned is a text made a limit name (see place.name), or the start of
// one: its first maxNameLen+1 bytes, enough to tell a name that must be
// cut, the length of all of it and its last byte (0 if it is empty).
type cleaned struct {
	head []byte
	n    int
	last byte
}

// push appends the byte b of a text, b already a name byte.
func (c *cleaned) push(b byte) {
	if b == '_' && (c.n == 0 || c.last == '.' || c.last == '_') {
		return // "path_/login" → "path_login", not "path__login"
	}
	c.n++
	c.last = b
	if len(c.head) <= maxNameLen {
		c.head = append(c.head, b)
	}
}

// add appends t, which starts a segment or follows the '_' of one.
func (c *cleaned) add(t *text) {
	if t.n == 0 {
		return
	}
	c.n += t.n
	c.last = t.last
	if room := maxNameLen + 1 - len(c.head); room > 0 {
		c.head = append(c.head, t.head[:min(room, len(t.head))]...)
	}
}

// name returns the name the cleaned text makes, sum returning the SHA-256
// of what it was cleaned from (called for a long name only).
func (c *cleaned) name(sum func() []byte) string {
	switch {
	case c.n == 0:
		return "descriptor"
	case c.n <= maxNameLen:
		return string(c.head)
	}
	return string(c.head[:55]) + "-" + hex.EncodeToString(sum()[:4])
}

// nameByte reports whether sluice.ValidName allows the byte c.
func nameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-'
}

// shown returns s as a message shows it: s itself, or the start of s and
// its length if s is longer than 100 bytes (yamlcheck.Shown).
func shown(s string) string { return yamlcheck.Shown(s) }
