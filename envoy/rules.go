package envoy

import (
	"slices"
	"strconv"
	"strings"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"

	"github.com/sluice-dev/sluice"
)

// Rules are the descriptor trees of one or more domains, as loaded by
// LoadRules or LoadRuleFiles. A Rules value is immutable once loaded and safe
// for concurrent use; reload by loading a new one and handing it to
// Service.SetRules. The zero Rules (and a nil *Rules) has no domains: every
// request is OK.
type Rules struct {
	domains map[string]*node
}

// Domains returns the names of the domains the rules define, sorted.
func (r *Rules) Domains() []string {
	if r == nil {
		return nil
	}
	out := make([]string, 0, len(r.domains))
	for d := range r.domains {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

// node is one level of a domain's descriptor tree.
type node struct {
	exact    map[entry]*node  // key and value
	prefix   []prefixChild    // value ending in "*", in file order
	wildcard map[string]*node // key without value
	rule     *rule            // nil: this level only leads deeper
}

type entry struct{ key, value string }

type prefixChild struct {
	key, prefix string
	n           *node
}

func (n *node) leaf() bool {
	return len(n.exact) == 0 && len(n.prefix) == 0 && len(n.wildcard) == 0
}

// child is the node that the entry (key, value) selects below n, or nil.
func (n *node) child(key, value string) *node {
	if c := n.exact[entry{key, value}]; c != nil {
		return c
	}
	for i := range n.prefix {
		if p := &n.prefix[i]; p.key == key && strings.HasPrefix(value, p.prefix) {
			return p.n
		}
	}
	return n.wildcard[key]
}

// lookup returns the rule that limits a descriptor of domain, or nil: the
// rule of the node that the descriptor's last entry reaches, walking one
// level per entry.
func (r *Rules) lookup(domain string, entries []*ratelimitv3.RateLimitDescriptor_Entry) *rule {
	if r == nil {
		return nil
	}
	n := r.domains[domain]
	for i, e := range entries {
		if n == nil {
			return nil
		}
		n = n.child(e.GetKey(), e.GetValue())
		if n != nil && i < len(entries)-1 && n.leaf() {
			return nil // the request goes deeper than the configuration
		}
	}
	if n == nil {
		return nil
	}
	return n.rule
}

func (r *Rules) knows(domain string) bool {
	return r != nil && r.domains[domain] != nil
}

// rule is the rate_limit of one node.
type rule struct {
	// name is rate_limit.name, "" when unset: what replaces refers to.
	name string
	// label names the limit in statuses, headers and observers: name, or one
	// derived from the node's path. It is limit.Name() for enforced rules.
	label     string
	limit     sluice.Limit // valid unless unlimited or blocked
	unlimited bool
	blocked   bool // requests_per_unit 0: every request is over the limit
	shadow    bool
	replaces  []string
	// current is the limit as reported in statuses: as configured.
	requestsPerUnit uint32
	unit            rlsv3.RateLimitResponse_RateLimit_Unit
	multiplier      uint32 // 0: none
	// policy is this limit's item of the IETF RateLimit-Policy header.
	policy string
}

// currentLimit sets cl (zero) to the rule's limit as configured and returns
// it; nil for an unlimited rule.
func (r *rule) currentLimit(cl *rlsv3.RateLimitResponse_RateLimit) *rlsv3.RateLimitResponse_RateLimit {
	if r.unlimited {
		return nil
	}
	cl.Name, cl.RequestsPerUnit, cl.Unit = r.name, r.requestsPerUnit, r.unit
	if r.multiplier > 0 {
		cl.UnitMultiplier = wrapUint32(r.multiplier)
	}
	return cl
}

// finish fills the derived fields of an enforced rule from its limit.
func (r *rule) finish() *rule {
	r.label = r.limit.Name()
	r.shadow = r.limit.Shadow()
	r.policy = `"` + r.label + `";q=` + strconv.FormatInt(r.limit.Quantity(), 10) +
		`;w=` + strconv.FormatInt(int64(r.limit.Window().Seconds()), 10)
	return r
}
