package envoy

import (
	"crypto/sha256"
	"encoding/hex"
	"github.com/sluice-dev/sluice/internal/yamlcheck"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice"
)

// descriptors decodes a list of descriptors into the children of parent;
// trail holds the path segments ("key" or "key_value") leading to parent.
func (d *decoder) descriptors(n *yaml.Node, path string, parent *node, trail []string) {
	lines := map[entry]int{}
	d.List(n, path, func(_ int, e *yaml.Node, path string) {
		var (
			key, value                         string
			keyNode, rlNode, shadowNode        *yaml.Node
			quotaNode, shareNode, childrenNode *yaml.Node
			childrenPath                       string
			shadow, quota, share               bool
			rl                                 rawRateLimit
			child                              = &node{}
		)
		ok := d.Mapping(e, path, map[string]field{
			"key":   func(n *yaml.Node, p string) { key, keyNode = d.Str(n, p), n },
			"value": func(n *yaml.Node, p string) { value = d.optionalStr(n, p) },
			"rate_limit": func(n *yaml.Node, p string) {
				rlNode = n
				d.rateLimit(n, p, &rl)
			},
			"shadow_mode": func(n *yaml.Node, p string) { shadow, shadowNode = d.Bool(n, p), n },
			"quota_mode":  func(n *yaml.Node, p string) { quota, quotaNode = d.Bool(n, p), n },
			"share_threshold": func(n *yaml.Node, p string) {
				share, shareNode = d.Bool(n, p), n
			},
			// detailed_metric and value_to_metric change envoyproxy/ratelimit's
			// statsd names; sluice labels metrics by limit name only (bounded
			// cardinality), so they have no effect.
			"detailed_metric": func(n *yaml.Node, p string) { d.Bool(n, p) },
			"value_to_metric": func(n *yaml.Node, p string) { d.Bool(n, p) },
			"descriptors":     func(n *yaml.Node, p string) { childrenNode, childrenPath = n, p },
		})
		if !ok {
			return
		}
		switch {
		case keyNode == nil:
			d.Errorf(e, yamlcheck.Join(path, "key"), "missing")
			return
		case key == "":
			d.Errorf(keyNode, yamlcheck.Join(path, "key"), "must not be empty")
			return
		}
		ent := entry{key, value}
		if line, dup := lines[ent]; dup {
			what := "key " + key
			if value != "" {
				what += " with value " + value
			}
			d.Errorf(keyNode, yamlcheck.Join(path, "key"), "%s is already a descriptor of this list (line %d)", what, line)
			return
		}
		lines[ent] = keyNode.Line
		seg := key
		if value != "" {
			seg += "_" + value
		}
		trail := append(trail[:len(trail):len(trail)], seg)
		if rlNode != nil && rlNode.Kind == yaml.MappingNode {
			child.rule = d.rule(&rl, rlNode, yamlcheck.Join(path, "rate_limit"), shadow, quota, trail)
		} else {
			if shadow {
				d.Errorf(shadowNode, yamlcheck.Join(path, "shadow_mode"), "has no effect without a rate_limit")
			}
			if quota {
				d.Errorf(quotaNode, yamlcheck.Join(path, "quota_mode"), "has no effect without a rate_limit")
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
				d.Errorf(shareNode, yamlcheck.Join(path, "share_threshold"),
					"applies only to a value ending in *, or a key ending in * without a value (all the entries it matches share one limit)")
			}
		}
		if childrenNode != nil {
			d.descriptors(childrenNode, childrenPath, child, trail)
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
	replacePaths                              []string
	unitNode, rpuNode, unlimitedNode          *yaml.Node
	nameNode, algNode, burstNode, maxWaitNode *yaml.Node
}

func (d *decoder) rateLimit(n *yaml.Node, path string, rl *rawRateLimit) {
	d.Mapping(n, path, map[string]field{
		"unit": func(n *yaml.Node, p string) { rl.unit, rl.unitNode = d.Str(n, p), n },
		"requests_per_unit": func(n *yaml.Node, p string) {
			rl.requestsPerUnit, rl.rpuNode = d.Int(n, p, 0, 1<<32-1), n
		},
		"unlimited": func(n *yaml.Node, p string) { rl.unlimited, rl.unlimitedNode = d.Bool(n, p), n },
		"name":      func(n *yaml.Node, p string) { rl.name, rl.nameNode = d.optionalStr(n, p), n },
		"replaces": func(n *yaml.Node, p string) {
			d.List(n, p, func(_ int, e *yaml.Node, p string) {
				var name string
				nameNode := e
				if !d.Mapping(e, p, map[string]field{
					"name": func(n *yaml.Node, p string) { name, nameNode = d.Str(n, p), n },
				}) {
					return
				}
				if name == "" {
					d.Errorf(nameNode, yamlcheck.Join(p, "name"), "must name the limit to replace")
					return
				}
				rl.replaces = append(rl.replaces, name)
				rl.replaceNodes = append(rl.replaceNodes, nameNode)
				rl.replacePaths = append(rl.replacePaths, yamlcheck.Join(p, "name"))
			})
		},
		// sluice extensions.
		"algorithm": func(n *yaml.Node, p string) { rl.algorithm, rl.algNode = d.Str(n, p), n },
		"burst":     func(n *yaml.Node, p string) { rl.burst, rl.burstNode = d.Int(n, p, 1, sluice.MaxQuantity), n },
		"max_wait": func(n *yaml.Node, p string) {
			rl.maxWaitNode = n
			s := d.Str(n, p)
			if s == "" {
				return
			}
			v, err := yamlcheck.ParseDuration(s)
			switch {
			case err != nil:
				d.Errorf(n, p, "%q is not a duration (use e.g. 250ms, 2s)", s)
			case v <= 0:
				d.Errorf(n, p, "%q must be positive", s)
			default:
				rl.maxWait = v
			}
		},
	})
}

// rule builds the rule of a rate_limit block, or nil if it is invalid.
func (d *decoder) rule(rl *rawRateLimit, n *yaml.Node, path string, shadow, quota bool, trail []string) *rule {
	before := len(d.Errs)
	// quota_mode reports an OVER_LIMIT descriptor as OK and never refuses
	// the request: a shadow limit, reported its own way (shadow_mode, if
	// also set, decides the report, as in envoyproxy/ratelimit).
	r := &rule{name: rl.name, replaces: rl.replaces, shadow: shadow || quota, quota: quota && !shadow, label: rl.name}
	for i, name := range rl.replaces {
		if name == rl.name {
			d.Errorf(rl.replaceNodes[i], rl.replacePaths[i], "a limit cannot replace itself")
		}
	}
	switch {
	case r.label == "":
		r.label = derivedName(trail)
	case !sluice.ValidName(r.label):
		// envoyproxy/ratelimit takes any text; sluice's limit names are
		// header tokens and metric labels.
		r.label = derivedName([]string{r.label})
	}
	if rl.unlimited {
		r.unlimited = true
		for _, x := range []struct {
			n    *yaml.Node
			name string
		}{{rl.unitNode, "unit"}, {rl.rpuNode, "requests_per_unit"}, {rl.algNode, "algorithm"},
			{rl.burstNode, "burst"}, {rl.maxWaitNode, "max_wait"}} {
			if x.n != nil {
				d.Errorf(x.n, yamlcheck.Join(path, x.name), "has no effect on an unlimited rule (remove it or unlimited)")
			}
		}
		return r
	}
	unit, pbUnit, ok := parseUnit(rl.unit)
	switch {
	case rl.unitNode == nil:
		d.Errorf(n, yamlcheck.Join(path, "unit"), "missing (one of %s)", unitNames())
	case !ok && rl.unit != "":
		d.Errorf(rl.unitNode, yamlcheck.Join(path, "unit"), "%q is not one of %s", rl.unit, unitNames())
	}
	if rl.rpuNode == nil {
		d.Errorf(n, yamlcheck.Join(path, "requests_per_unit"), "missing")
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
				d.Errorf(x.n, yamlcheck.Join(path, x.name), "has no effect when requests_per_unit is 0 (every request is refused)")
			}
		}
	}
	alg := sluice.AlgorithmFixedWindow
	if rl.algNode != nil && rl.algorithm != "" {
		a, err := sluice.ParseAlgorithm(rl.algorithm)
		if err != nil {
			d.Errorf(rl.algNode, yamlcheck.Join(path, "algorithm"), "%v", err)
		}
		alg = a
		if a == sluice.AlgorithmConcurrency {
			d.Errorf(rl.algNode, yamlcheck.Join(path, "algorithm"),
				"concurrency limits work in flight and needs a release when a request ends, which Envoy's rate limit protocol never sends: use a rate algorithm")
		}
	}
	if rl.burstNode != nil && alg != 0 && alg != sluice.AlgorithmTokenBucket && alg != sluice.AlgorithmLeakyBucket && alg != sluice.AlgorithmGCRA {
		d.Errorf(rl.burstNode, yamlcheck.Join(path, "burst"), "applies only to token-bucket, leaky-bucket and gcra, not %v", alg)
	}
	if rl.maxWaitNode != nil && alg != 0 && alg != sluice.AlgorithmLeakyBucket {
		d.Errorf(rl.maxWaitNode, yamlcheck.Join(path, "max_wait"), "applies only to leaky-bucket (as a queue), not %v", alg)
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
		d.Errorf(n, path, "%v", err)
		return nil
	}
	return r.finish()
}

// optionalStr decodes a string that may be written empty (key: with
// nothing after it, ~ or null), which envoyproxy/ratelimit's YAML library
// reads as "".
func (d *decoder) optionalStr(n *yaml.Node, path string) string {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return ""
	}
	return d.Str(n, path)
}

// derivedName names a rule without rate_limit.name after its path in the
// tree, e.g. "remote_address.path_login" for key remote_address then key
// path with value /login: segments joined by '.', every byte outside
// [A-Za-z0-9._-] replaced by '_' (leading ones dropped), and a path longer
// than 64 bytes cut to 55 and suffixed with '-' and 8 hex digits of its
// SHA-256, so that it stays distinct.
func derivedName(trail []string) string {
	full := strings.Join(trail, ".")
	b := make([]byte, 0, len(full))
	for i := 0; i < len(full); i++ {
		c := full[i]
		if !sluice.ValidName(string(c)) {
			c = '_'
		}
		if c == '_' && (len(b) == 0 || b[len(b)-1] == '.' || b[len(b)-1] == '_') {
			continue // "path_/login" → "path_login", not "path__login"
		}
		b = append(b, c)
	}
	if len(b) == 0 {
		b = append(b, "descriptor"...)
	}
	if len(b) > 64 {
		sum := sha256.Sum256([]byte(full))
		b = append(b[:55], '-')
		b = append(b, hex.EncodeToString(sum[:4])...)
	}
	return string(b)
}
