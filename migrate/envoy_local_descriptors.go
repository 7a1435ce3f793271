package migrate

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// envoyLocalDescriptor makes the rule of one descriptor of a
// configuration: its entries name what the route's rate_limits actions
// read, matched (a value) or counted apart (no value).
func (t *Translation) envoyLocalDescriptor(d *yaml.Node, c envoyLocalConfig, base Rule, name, where string, shadow bool) {
	bucket := mapValue(d, "token_bucket")
	if bucket == nil {
		t.differs(where, "not imported: a descriptor without a token_bucket.")
		return
	}
	r := base
	r.Name, r.Headers = t.ruleName(name), append([]HeaderMatch(nil), base.Headers...)
	entries := mapValue(d, "entries")
	if entries == nil || len(entries.Content) == 0 {
		t.differs(where, "not imported: a descriptor without entries.")
		return
	}
	keys := make([]string, len(entries.Content))
	for i, e := range entries.Content {
		keys[i] = scalar(mapValue(e, "key"))
	}
	actions := descriptorActions(c, keys)
	if actions == nil {
		t.differs(where, "not imported: no rate_limits entry that the filter reads for its route (of its stage %s, without a disable_key; the virtual host's only as vh_rate_limits says) makes the descriptor [%s], its actions' keys in that order, so Envoy never matches it.", or(scalar(mapValue(c.cfg, "stage")), "0"), strings.Join(keys, ", "))
		return
	}
	for i, e := range entries.Content {
		key, value, action := keys[i], scalar(mapValue(e, "value")), actions[i]
		switch {
		case mapValue(action, "request_headers") != nil:
			header := scalar(mapValue(mapValue(action, "request_headers"), "header_name"))
			attr, match := headerAttribute(header)
			switch {
			case attr == "":
				t.differs(where, "not imported: sluice cannot read the header %q.", header)
				return
			case value == "":
				r.Key = append(r.Key, attr)
				if strings.HasPrefix(attr, "header:") {
					r.HeaderFrom = "any"
				}
				r.Fallback = "skip"
			case match == "path" && validPathValue(value) && validPattern(exactPattern(value)):
				// Envoy compares the :path string: that path alone.
				r.Paths = []string{exactPattern(value)}
				t.differs(where, "Envoy compares :path with %q as a string, query string included, so a request of that path with a query (%s?x=1) is not the descriptor's; sluice's rule matches the path whatever the query, and counts those requests too.", value, value)
			case match == "header" && printable(value):
				r.Headers = append(r.Headers, HeaderMatch{Name: strings.TrimPrefix(attr, "header:"), Value: value})
			default:
				t.differs(where, "not imported: sluice's rules cannot match %s = %q.", header, value)
				return
			}
		case mapValue(action, "generic_key") != nil:
			if value != "" && value != scalar(mapValue(mapValue(action, "generic_key"), "descriptor_value")) {
				t.differs(where, "not imported: the generic_key action never makes the value %q.", value)
				return
			}
		case mapValue(action, "remote_address") != nil && value == "":
			r.Key = append(r.Key, "ip/32/128")
		case mapValue(action, "masked_remote_address") != nil && value == "":
			mra := mapValue(action, "masked_remote_address")
			v4, v6 := 32, 128
			if n, err := strconv.Atoi(scalar(mapValue(mra, "v4_prefix_mask_len"))); err == nil && n >= 1 && n <= 32 {
				v4 = n
			}
			if n, err := strconv.Atoi(scalar(mapValue(mra, "v6_prefix_mask_len"))); err == nil && n >= 1 && n <= 128 {
				v6 = n
			}
			r.Key = append(r.Key, fmt.Sprintf("ip/%d/%d", v4, v6))
		default:
			t.differs(where, "not imported: sluice's rules cannot match or count the entry %q as its action makes it.", key)
			return
		}
	}
	dynamic := len(r.Key) > 0 // an entry without a value counts each value apart
	if !dynamic {
		r.Key = []string{"rule"}
	}
	if len(r.Key) > 1 && r.Fallback == "skip" {
		r.Fallback = "shared"
	}
	l, ok := t.envoyBucket(bucket, "per-descriptor", where)
	if !ok {
		return
	}
	l.Shadow = shadow
	r.Limits = []Limit{l}
	t.same(where, "a descriptor entry without a value gives each value its own bucket (key %s), as Envoy's dynamic descriptors do; one with a value matches it.", strings.Join(r.Key, ", "))
	if dynamic {
		t.envoyDynamicCache(c, where)
	}
	t.SluiceRules = append(t.SluiceRules, r)
}

// envoyDefaultDynamic is how many values' buckets Envoy keeps for a
// descriptor with an entry without a value when max_dynamic_descriptors is
// unset.
const envoyDefaultDynamic = 20

// envoyDynamicCache reports, at where, that Envoy keeps the buckets of at
// most max_dynamic_descriptors values (of c's configuration; 20 when
// unset) of a descriptor with an entry without a value, the least recently
// used evicted: a value seen again after its eviction starts with a full
// bucket. sluice keeps every value's bucket.
func (t *Translation) envoyDynamicCache(c envoyLocalConfig, where string) {
	n, written := envoyDefaultDynamic, "20 when unset"
	if v := mapValue(c.cfg, "max_dynamic_descriptors"); v != nil {
		s := scalar(v)
		if v.Kind == yaml.MappingNode {
			s = scalar(mapValue(v, "value"))
		}
		if m, err := strconv.Atoi(s); err == nil && m >= 1 {
			n, written = m, "as set"
		}
	}
	t.differs(where+" max_dynamic_descriptors", "Envoy keeps the buckets of at most %d values of this descriptor (max_dynamic_descriptors, %s), evicting the least recently used: a value seen again after its eviction starts with a full bucket. With more than %d values active, Envoy admits an evicted value's requests again where sluice, which keeps every value's bucket, refuses them while its bucket is empty.", n, written, n)
}

// descriptorActions returns the actions of the first rate_limits entry
// that makes a descriptor of keys, in that order, one action for each key;
// nil when none does. Envoy's local rate limit filter matches a configured
// descriptor against the whole descriptor each entry makes, of the entries
// it reads (localRateLimits).
func descriptorActions(c envoyLocalConfig, keys []string) []*yaml.Node {
	for _, rl := range localRateLimits(c) {
		acts := mapValue(rl, "actions")
		if acts == nil || len(acts.Content) != len(keys) {
			continue
		}
		same := true
		for i, a := range acts.Content {
			same = same && actionKey(a) == keys[i]
		}
		if same {
			return acts.Content
		}
	}
	return nil
}

// localRateLimits returns the rate_limits entries that the local rate
// limit filter of c makes descriptors of: the configuration's own
// rate_limits when it has any; else the route's of the filter's stage
// (stage, 0 by default), then the virtual host's as vh_rate_limits says
// (OVERRIDE, the default: only for a route without rate_limits; INCLUDE:
// always; IGNORE: never). An entry with a disable_key is left out, as the
// filter leaves it.
func localRateLimits(c envoyLocalConfig) []*yaml.Node {
	if own := mapValue(c.cfg, "rate_limits"); own != nil && len(own.Content) > 0 {
		return own.Content
	}
	stage := or(scalar(mapValue(c.cfg, "stage")), "0")
	applicable := func(rls *yaml.Node) []*yaml.Node {
		var out []*yaml.Node
		if rls == nil {
			return nil
		}
		for _, rl := range rls.Content {
			if or(scalar(mapValue(rl, "stage")), "0") == stage && scalar(mapValue(rl, "disable_key")) == "" {
				out = append(out, rl)
			}
		}
		return out
	}
	var route *yaml.Node
	if c.route != nil {
		route = mapValue(c.route, "rate_limits")
		if rt := mapValue(c.route, "route"); rt != nil && mapValue(rt, "rate_limits") != nil {
			route = mapValue(rt, "rate_limits")
		}
	}
	out := applicable(route)
	vh := or(scalar(mapValue(c.cfg, "vh_rate_limits")), "OVERRIDE")
	if c.vhost != nil && (vh == "INCLUDE" || vh == "OVERRIDE" && (route == nil || len(route.Content) == 0)) {
		out = append(out, applicable(mapValue(c.vhost, "rate_limits"))...)
	}
	return out
}

// actionKey is the descriptor key an action makes.
func actionKey(a *yaml.Node) string {
	switch {
	case mapValue(a, "request_headers") != nil:
		return scalar(mapValue(mapValue(a, "request_headers"), "descriptor_key"))
	case mapValue(a, "remote_address") != nil:
		return "remote_address"
	case mapValue(a, "masked_remote_address") != nil:
		return "masked_remote_address"
	case mapValue(a, "generic_key") != nil:
		if k := scalar(mapValue(mapValue(a, "generic_key"), "descriptor_key")); k != "" {
			return k
		}
		return "generic_key"
	}
	return ""
}

// headerAttribute maps a header an action reads onto a rule key attribute,
// and says how a value of it is matched ("path", "header").
func headerAttribute(header string) (attr, match string) {
	switch strings.ToLower(header) {
	case ":path":
		return "path", "path"
	case ":authority", "host":
		return "host", ""
	}
	if !validHeaderName(header) {
		return "", ""
	}
	return "header:" + http.CanonicalHeaderKey(header), "header"
}

// dynamicOverlap reports whether descs has a descriptor with an entry
// without a value and another of the same keys with every value given:
// Envoy gives the second its own bucket, which the first then does not
// count.
func dynamicOverlap(descs *yaml.Node) bool {
	type shape struct {
		keys    string
		dynamic bool
	}
	var shapes []shape
	for _, d := range descs.Content {
		var keys []string
		dynamic := false
		if es := mapValue(d, "entries"); es != nil {
			for _, e := range es.Content {
				keys = append(keys, scalar(mapValue(e, "key")))
				dynamic = dynamic || scalar(mapValue(e, "value")) == ""
			}
		}
		shapes = append(shapes, shape{strings.Join(keys, "\x00"), dynamic})
	}
	for _, a := range shapes {
		for _, b := range shapes {
			if a.dynamic && !b.dynamic && a.keys == b.keys {
				return true
			}
		}
	}
	return false
}
