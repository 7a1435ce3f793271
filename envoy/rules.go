package envoy

import (
	"slices"
	"strconv"
	"strings"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/leasehold"
	"github.com/sluice-dev/sluice/internal/quota"
)

// Rules are the descriptor trees of one or more domains, as loaded by
// LoadRules or LoadRuleFiles. A Rules value is immutable once loaded (and
// StateLeases, if called, has run) and safe for concurrent use; reload by
// loading a new one and handing it to
// Service.SetRules. The zero Rules (and a nil *Rules) has no domains: every
// request is OK.
type Rules struct {
	domains map[string]*node
	skipped []string // links to nothing that LoadRuleFiles skipped
}

// Skipped returns the paths of the links to nothing (whose target does
// not exist) that LoadRuleFiles found in its folders and skipped, in the
// order it found them; nil when none.
func (r *Rules) Skipped() []string {
	if r == nil {
		return nil
	}
	return slices.Clone(r.skipped)
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

// Limits returns the limits the rules enforce, each named by its label (a
// rule's rate_limit.name, or the name derived from its place), in no
// particular order; a limit of several rules appears once per rule.
// Unlimited and requests_per_unit 0 rules have none.
func (r *Rules) Limits() []sluice.Limit {
	if r == nil {
		return nil
	}
	var out []sluice.Limit
	r.eachRule(func(ru *rule) {
		if !ru.unlimited && !ru.blocked {
			out = append(out, ru.limit)
		}
	})
	return out
}

// node is one level of a domain's descriptor tree.
type node struct {
	exact    map[entry]*node  // key and value
	prefix   []prefixChild    // value (or key without value) ending in "*", in file order
	wildcard map[string]*node // key without value
	rule     *rule            // nil: this level only leads deeper
	// shared is share_threshold's pattern as written (the value "files/*",
	// or the key "user*" of a node without a value), "" without it: every
	// value that this node's prefix matches counts in one state per entry
	// key, stored under the pattern instead of the value.
	shared string
}

type entry struct{ key, value string }

// prefixChild is a child whose value ends in "*": it matches an entry of
// its key whose value begins with prefix. A joined one is a child without
// a value whose key ends in "*", which envoyproxy/ratelimit matches
// against the entry's key, "_" and value as one string: it matches an
// entry whose key, "_" and value begin with prefix.
type prefixChild struct {
	key, prefix string
	n           *node
	joined      bool
}

// matches reports whether the entry (key, value) is one that p matches.
func (p *prefixChild) matches(key, value string) bool {
	if !p.joined {
		return p.key == key && strings.HasPrefix(value, p.prefix)
	}
	if len(p.prefix) <= len(key) {
		return strings.HasPrefix(key, p.prefix)
	}
	rest, ok := strings.CutPrefix(p.prefix, key)
	if !ok {
		return false
	}
	rest, ok = strings.CutPrefix(rest, "_")
	return ok && strings.HasPrefix(value, rest)
}

// match is a lookup's outcome: the rule that limits a descriptor, or nil,
// and, when share_threshold applies, the value each entry is stored under
// (its pattern, or "" for its own value); nil otherwise.
type match struct {
	rule   *rule
	shared []string
}

func (n *node) leaf() bool {
	return len(n.exact) == 0 && len(n.prefix) == 0 && len(n.wildcard) == 0
}

// child is the node that the entry (key, value) selects below n, or nil,
// and the share_threshold pattern it is stored under when a prefix with
// share_threshold selected it ("" otherwise).
func (n *node) child(key, value string) (*node, string) {
	if c := n.exact[entry{key, value}]; c != nil {
		return c, ""
	}
	for i := range n.prefix {
		if p := &n.prefix[i]; p.matches(key, value) {
			return p.n, p.n.shared
		}
	}
	return n.wildcard[key], ""
}

// lookup returns what limits a descriptor of domain: the rule of the node
// that the descriptor's last entry reaches, walking one level per entry.
func (r *Rules) lookup(domain string, entries []*ratelimitv3.RateLimitDescriptor_Entry) match {
	if r == nil {
		return match{}
	}
	var m match
	n := r.domains[domain]
	for i, e := range entries {
		if n == nil {
			return match{}
		}
		var pattern string
		n, pattern = n.child(e.GetKey(), e.GetValue())
		if pattern != "" {
			if m.shared == nil {
				m.shared = make([]string, len(entries))
			}
			m.shared[i] = pattern
		}
		if n != nil && i < len(entries)-1 && n.leaf() {
			return match{} // the request goes deeper than the configuration
		}
	}
	if n == nil || n.rule == nil {
		return match{}
	}
	m.rule = n.rule
	return m
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
	label string
	// id is the identity of the state of the rule's limit (see
	// sluice.Limit.WithID): stateID for a rule of the rules files, "" (the
	// label) for a limit override.
	id string
	// overID is the identity of the state of the rule's records: the
	// over-limit records of its fixed windows and a blocked rule's record
	// of hits (see recordID).
	overID    string
	limit     sluice.Limit // valid unless unlimited or blocked
	unlimited bool
	blocked   bool // requests_per_unit 0: every request is over the limit
	shadow    bool
	// quota is quota_mode: a shadow limit whose OVER_LIMIT status is
	// reported as OK, with current_limit and limit_remaining and without
	// duration_until_reset.
	quota    bool
	replaces []string
	// unitSeconds is the length of the rule's unit (times its multiplier)
	// in seconds. fixed marks envoyproxy/ratelimit's own algorithm, a
	// fixed window: its windows are counted from the Unix epoch (see
	// calendar.go), its duration_until_reset is the time to the end of
	// the Unix window, and a request it refuses spends what is left of the
	// window, as envoyproxy/ratelimit counts the hits of every request.
	unitSeconds int64
	fixed       bool
	// stated is what the RateLimit headers state of the limit (see
	// internal/quota): a fixed window's requests_per_unit per unit, a
	// bucket's burst per the time it takes to refill.
	stated quota.Quota
	// calendar is set when the Unix windows are not sluice's (weeks,
	// months, years): cal then holds the current Unix window's limit.
	calendar bool
	cal      calendar
	// current is the limit as reported in statuses: as configured.
	requestsPerUnit uint32
	unit            rlsv3.RateLimitResponse_RateLimit_Unit
	multiplier      uint32 // 0: none
	// policy is this limit's item of the IETF RateLimit-Policy header.
	policy string
}

// stateID is the identity of the state of a rule of the rules files whose
// limit is of algorithm alg and unit unitSeconds (see
// sluice.Limit.WithID): it names neither the rule nor its limit, as
// envoyproxy/ratelimit's counter is named by the domain, the descriptor's
// entries and the window only. So a rule keeps its clients' counts when it
// is named, renamed or loses its name, when its derived name changes, or
// when its quantity does (the state is then clamped into the new limit by
// sluice); a rule of another unit or algorithm starts afresh. The rules of
// a domain never share a state: each descriptor (the store key: domain and
// entries, see storeKey) has one rule. A limit override's state, named
// "override-…", stays apart from the rule's.
func stateID(alg sluice.Algorithm, unitSeconds int64) string {
	return "rule." + alg.String() + "." + strconv.FormatInt(unitSeconds, 10) + "s"
}

// recordID returns the state ID of the records (see settle.go and
// blocked.go) of a fixed window whose state ID is id, or of a blocked
// rule that would count in such a window: id and ".over". It is no limit's
// own, so a store that judges a limit's states by the parameters it meets
// under its ID (the memory store's eviction) judges no client's count
// against a record's one unit. No limit's ID ends so: a rule's state ID
// ends in its unit's seconds and "s", an override's name is "override-"
// and a window's name.
func recordID(id string) string { return id + ".over" }

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
	r.overID = recordID(r.limit.ID())
	r.shadow = r.limit.Shadow()
	r.unitSeconds = int64(r.limit.Window() / time.Second)
	r.fixed = r.limit.Algorithm() == sluice.AlgorithmFixedWindow
	r.calendar = r.fixed && r.unitSeconds > 0 && epochUnix()%r.unitSeconds != 0
	r.state(r.limit)
	return r
}

// state sets what the headers state of the rule (stated, policy) from l:
// its limit, or the limit a store that leases it decides by.
func (r *rule) state(l sluice.Limit) {
	r.stated = quota.Of(l)
	if r.fixed { // envoyproxy/ratelimit's own: its unit and requests_per_unit
		r.stated.Q, r.stated.W = l.Quantity(), int64(l.Window().Seconds())
	}
	r.policy = `"` + r.label + `";q=` + strconv.FormatInt(r.stated.Q, 10)
	if r.stated.W > 0 {
		r.policy += `;w=` + strconv.FormatInt(r.stated.W, 10)
	} else {
		r.policy += `;qu="concurrent-requests"` // no window: a lease time is not one
	}
}

// StateLeases has the RateLimit headers of r's rules state, for each
// token bucket, GCRA or leaky-bucket meter that the store leases, the
// limit its shared state decides every check by: the rule's rate with its
// burst less what refills in a lease's life (redis, Leased quota), the
// most it admits at once. leased reports whether the store leases the
// limit of a state ID (redis.LeaseOptions: its Limits, else its Mode);
// maxAge is its leases' longest life (redis.LeaseOptions.MaxAge), a
// minute when zero or less. Other rules, and the statuses' current_limit
// (the rule as configured), are unchanged. Call it before the rules are
// handed to a Service: it is not safe for use concurrent with one.
func (r *Rules) StateLeases(leased func(id string) bool, maxAge time.Duration) {
	if r == nil || leased == nil {
		return
	}
	if maxAge <= 0 {
		maxAge = leasehold.DefaultMaxAge
	}
	r.eachRule(func(ru *rule) {
		if !ru.unlimited && !ru.blocked && leased(ru.limit.ID()) {
			if shared, _, ok := leasehold.Of(ru.limit, maxAge); ok {
				ru.state(shared)
			}
		}
	})
}

// eachRule calls f with every rule of r, domain by domain, each level's
// before those deeper.
func (r *Rules) eachRule(f func(*rule)) {
	var walk func(n *node)
	walk = func(n *node) {
		if n.rule != nil {
			f(n.rule)
		}
		for _, c := range n.exact {
			walk(c)
		}
		for _, c := range n.prefix {
			walk(c.n)
		}
		for _, c := range n.wildcard {
			walk(c)
		}
	}
	for _, n := range r.domains {
		walk(n)
	}
}
