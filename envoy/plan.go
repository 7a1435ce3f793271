package envoy

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/rlscodec"
)

// Bounds on one request. A request beyond them is answered with gRPC code
// InvalidArgument. The length of keys and values has no bound of its own:
// a descriptor is limited whatever its length (one longer than
// sluice.MaxKeyLen under a SHA-256 of its entries), as a bound below the
// gRPC server's message size would let a client that puts a long value in
// a header escape its limit (Envoy lets a request through when the
// service answers an error, by default). The message size bounds them.
const (
	// MaxDescriptors is the most descriptors one request may carry: what
	// they spend is decided in one Limiter.Allow call, which takes at most
	// sluice.MaxChecks (see split.go for the peeks that do not fit).
	MaxDescriptors = sluice.MaxChecks
	// MaxEntries is the most entries one descriptor may have.
	MaxEntries = 32
	// MaxDomainBytes bounds a request's domain, which names a domain of
	// the rules (LoadRules refuses a longer one) and is told to observers
	// (Result.Domain) whether the rules know it or not.
	MaxDomainBytes = 1 << 10
	// MaxOverrideMultiplier is the largest unit_multiplier of a limit
	// override. Each override window is a limit of its own, which a store
	// keeps for as long as it lives (see memory.WithMaxLimits), and the
	// window is the caller's to choose: with at most 60 windows of each
	// unit, requests make a bounded number of limits (and of metric
	// labels), whatever they send.
	MaxOverrideMultiplier = 60
)

// plan is one request turned into sluice checks. Plans are pooled by the
// Service (with the decision and the observers' Result, see scratch): build
// resets one for a new request, keeping its slices' memory.
type plan struct {
	slots  []slot // one per descriptor
	checks []sluice.Check
	// unix is the request's time in Unix seconds, which fixed windows'
	// Unix windows and durations are reckoned from.
	unix int64
	// costs keeps the checks' costs while peekOver peeks; left holds, once
	// settle has run, what each refused check had left (it spent nothing),
	// for occurrence: below 0 by how far the count was past its quantity,
	// when readPast could tell.
	costs, left []int64
	// blocked is set when an enforced requests_per_unit 0 rule matched a
	// descriptor of a cost above 0: the request is refused, and decided by
	// peekOver as one that peeks at a window that went over.
	blocked bool
	// replaced holds the names of the rules that matched rules replace;
	// seen, policy and state are scratch space of headers.
	replaced map[string]bool
	seen     []bool
	policy   []byte
	state    []byte
	// gives are the limits that descriptors with is_negative_hits give
	// units back to (see negative.go).
	gives []give
	// order, batch and merged are scratch space of decide (see split.go)
	// and evaluate.
	order  []int
	batch  []sluice.Check
	merged []sluice.Status
}

// slot is how one descriptor is decided.
type slot struct {
	rule  *rule // nil: no limit applies
	check int   // index in plan.checks; -1 for unlimited and blocked rules
	// shared holds the share_threshold patterns of the descriptor's
	// entries (see match); nil without.
	shared []string
	// aligned: the check counts the rule's current Unix window (see
	// calendar.go); false for a calendar rule that falls back to sluice's
	// windows.
	aligned bool
	// subject is the check's key without suffix (see Outcome.Subject).
	subject string
	// over is the index in plan.checks of the peek at the window's
	// over-limit record (see settle.go) when the check is a peek at an
	// aligned window, or at the record of a blocked rule's hits (see
	// blocked.go); -1 otherwise.
	over int
	// cost is this descriptor's own cost, and later the cost of the
	// identical descriptors after it in the request, which share its check
	// (see occurrence).
	cost, later int64
	// limit is the descriptor's own limit, which the check's differs from
	// in quantity when identical descriptors of different limit overrides
	// share it (see bind).
	limit sluice.Limit
	// hitBefore: an identical descriptor before this one, of a blocked
	// rule, was hit (see blocked.go).
	hitBefore bool
	// wentOver: the window that this peek (over >= 0, not blocked) reads
	// went over its limit, as peekOver found it (see wentOver).
	wentOver bool
	// negative: the descriptor gives its cost back (is_negative_hits);
	// it has no check, and give is its index in plan.gives (-1 for a
	// blocked rule, which gives nothing back). left and peek are what
	// giveBack found: the units its limit holds after the descriptor's
	// give-back, and the status of the peek at it (see negative.go).
	negative bool
	give     int
	left     int64
	peek     sluice.Status
}

// errInvalid marks errors in the request (gRPC InvalidArgument).
var errInvalid = errors.New("invalid request")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errInvalid, fmt.Sprintf(format, args...))
}

// build validates req and matches its descriptors against rules at the
// time now, into p (whatever it held before).
func (p *plan) build(rules *Rules, req *rlsv3.RateLimitRequest, now time.Time) error {
	if err := rlscodec.DecodeError(req); err != nil {
		return invalid("%v", err)
	}
	switch n := len(req.GetDescriptors()); {
	case req.GetDomain() == "":
		return invalid("rate limit domain must not be empty")
	case len(req.GetDomain()) > MaxDomainBytes:
		return invalid("domain of %d bytes, more than %d", len(req.GetDomain()), MaxDomainBytes)
	case n == 0:
		return invalid("rate limit descriptor list must not be empty")
	case n > MaxDescriptors:
		return invalid("%d descriptors, more than %d in one request", n, MaxDescriptors)
	}
	domain := req.GetDomain()
	n := len(req.GetDescriptors())
	p.slots = slices.Grow(p.slots[:0], n)[:n]
	p.checks = p.checks[:0]
	p.gives = p.gives[:0]
	p.blocked = false
	p.unix = now.Unix()
	clear(p.replaced)
	for i, d := range req.GetDescriptors() {
		if err := validDescriptor(d); err != nil {
			return fmt.Errorf("descriptor %d: %w", i, err)
		}
		m := rules.lookup(domain, d.GetEntries())
		if o := d.GetLimit(); o != nil && rules.knows(domain) {
			var err error
			if m.rule, err = overrideRule(o); err != nil {
				return fmt.Errorf("descriptor %d: %w", i, err)
			}
			m.shared = nil
		}
		r := m.rule
		p.slots[i] = slot{rule: r, check: -1, over: -1, give: -1, shared: m.shared, negative: d.GetIsNegativeHits()}
		if r != nil && len(r.replaces) > 0 {
			if p.replaced == nil {
				p.replaced = map[string]bool{}
			}
			for _, name := range r.replaces {
				p.replaced[name] = true
			}
		}
	}
	for i, d := range req.GetDescriptors() {
		s := &p.slots[i]
		// An unlimited rule limits nothing to replace: it stays unlimited.
		if s.rule != nil && !s.rule.unlimited && s.rule.name != "" && p.replaced[s.rule.name] {
			s.rule = nil
		}
		if s.rule == nil || s.rule.unlimited {
			continue
		}
		cost, err := descriptorCost(req, d)
		if err != nil {
			return fmt.Errorf("descriptor %d: %w", i, err)
		}
		if s.negative && s.rule.blocked {
			continue // gives nothing back, and is no hit
		}
		if s.rule.blocked {
			// A hit is over the limit; every descriptor peeks at the
			// record of hits, which settle spends one of for a hit.
			s.cost = cost
			p.blocked = p.blocked || cost > 0 && !s.rule.shadow
			l, suffix := s.rule.blockedRecord(p.unix)
			key, _ := storeKey(domain, d.GetEntries(), s.shared, suffix)
			s.over, _ = p.add(key+overKey, l, 0)
			for _, b := range p.slots[:i] { // identical ones count in turn
				s.hitBefore = s.hitBefore || b.over == s.over && b.rule != nil && b.rule.blocked && (b.cost > 0 || b.hitBefore)
			}
			continue
		}
		l, suffix := s.rule.limit, ""
		if s.rule.calendar {
			var cl sluice.Limit
			if cl, suffix, s.aligned = s.rule.calendarAt(p.unix); s.aligned {
				l = cl
			} else {
				suffix = ""
			}
		} else {
			s.aligned = s.rule.fixed
		}
		var key string
		key, s.subject = storeKey(domain, d.GetEntries(), s.shared, suffix)
		s.cost, s.limit = cost, l
		if s.negative {
			s.give = p.addGive(key, l, s.rule.overID, s.aligned)
			continue
		}
		if s.check, err = p.add(key, l, cost); err != nil {
			return fmt.Errorf("descriptor %d: %w", i, err)
		}
		for j := range p.slots[:i] {
			if p.slots[j].check == s.check {
				p.slots[j].later += cost
			}
		}
		if s.aligned && cost == 0 {
			s.over, _ = p.add(key+overKey, overLimit(l, s.rule.overID), 0)
		}
	}
	p.bind()
	return nil
}

// add appends a check, or adds cost to the check of the same key and
// limit state (sluice.Limit.ID) — an identical descriptor's, whose limit
// may differ in quantity (see bind) — and returns its index.
func (p *plan) add(key string, l sluice.Limit, cost int64) (int, error) {
	for j := range p.checks {
		c := &p.checks[j]
		if c.Key == key && c.Limit.ID() == l.ID() {
			if c.Cost > math.MaxInt64-cost {
				return 0, invalid("hits_addend of identical descriptors add up to more than %d", int64(math.MaxInt64))
			}
			c.Cost += cost
			return j, nil
		}
	}
	p.checks = append(p.checks, sluice.Check{Key: key, Limit: l, Cost: cost})
	return len(p.checks) - 1, nil
}

// bind decides each check that identical descriptors of different
// quantities share — limit overrides of one window, whose state is one
// count (their limit's name, "override-per-minute", is its identity), as
// envoyproxy/ratelimit counts them in one counter — against each
// descriptor's own limit. envoyproxy/ratelimit adds them in turn: with n
// counted before the request, descriptor i fits when n + cum_i ≤ q_i,
// cum_i being its cost and the costs of those before it (the request's
// total less later_i). So all of them fit exactly when n + total ≤
// min_i(q_i + later_i), which becomes the quantity of the check's limit.
// A check whose descriptors' limits differ in more than quantity (none
// do: a rule's state ID, see stateID, is never an override's name) is
// decided by the first one's limit, which becomes each of theirs.
func (p *plan) bind() {
	for k := range p.checks {
		c := &p.checks[k]
		bound, mixed, alike := int64(math.MaxInt64), false, true
		for _, s := range p.slots {
			if s.check == k {
				alike = alike && sameWindow(s.limit, c.Limit)
				mixed = mixed || s.limit.Quantity() != c.Limit.Quantity()
				bound = min(bound, s.limit.Quantity()+min(s.later, sluice.MaxQuantity))
			}
		}
		switch {
		case !mixed:
		case alike:
			c.Limit = withQuantity(c.Limit, bound)
		default:
			for i := range p.slots {
				if p.slots[i].check == k {
					p.slots[i].limit = c.Limit
				}
			}
		}
	}
}

// offset is what slot s's own limit holds more than its check's: its
// quantity less the check's (see bind); 0 when they are one limit.
func (p *plan) offset(s slot) int64 {
	c := &p.checks[s.check]
	if !sameWindow(s.limit, c.Limit) {
		return 0
	}
	return s.limit.Quantity() - c.Limit.Quantity()
}

// sameWindow reports whether a and b are fixed windows of one length,
// name and mode, of any quantities.
func sameWindow(a, b sluice.Limit) bool {
	return a.Algorithm() == sluice.AlgorithmFixedWindow && b.Algorithm() == sluice.AlgorithmFixedWindow &&
		a.Window() == b.Window() && a.Name() == b.Name() && a.Shadow() == b.Shadow()
}

// withQuantity returns the fixed window l with quantity q.
func withQuantity(l sluice.Limit, q int64) sluice.Limit {
	return sluice.FixedWindow(q, l.Window()).Named(l.Name()).WithID(l.ID()).WithShadow(l.Shadow())
}

func validDescriptor(d *ratelimitv3.RateLimitDescriptor) error {
	entries := d.GetEntries()
	switch {
	case d == nil || len(entries) == 0:
		return invalid("no entries")
	case len(entries) > MaxEntries:
		return invalid("%d entries, more than %d", len(entries), MaxEntries)
	}
	for j, e := range entries {
		if e.GetKey() == "" {
			return invalid("entry %d: empty key", j)
		}
	}
	return nil
}

// descriptorCost is envoyproxy/ratelimit's: the descriptor's hits_addend
// when set (0 is a peek), else the request's, where 0 means 1.
func descriptorCost(req *rlsv3.RateLimitRequest, d *ratelimitv3.RateLimitDescriptor) (int64, error) {
	if h := d.GetHitsAddend(); h != nil {
		if h.GetValue() > math.MaxInt64 {
			return 0, invalid("hits_addend %d is larger than %d", h.GetValue(), int64(math.MaxInt64))
		}
		return int64(h.GetValue()), nil
	}
	return max(1, int64(req.GetHitsAddend())), nil
}

// overrideRule is the rule of a descriptor's limit override: a fixed window
// of requests_per_unit per unit × unit_multiplier (unset or 0 means 1, at
// most MaxOverrideMultiplier), as envoyproxy/ratelimit applies it (never
// in shadow mode). Its limit is named
// "override-" and the window's name, e.g. "override-per-minute".
func overrideRule(o *ratelimitv3.RateLimitDescriptor_RateLimitOverride) (*rule, error) {
	unit := rlsv3.RateLimitResponse_RateLimit_Unit(o.GetUnit())
	length := unitLength(unit)
	if length == 0 || unit == rlsv3.RateLimitResponse_RateLimit_WEEK {
		// envoy.type.v3.RateLimitUnit has no week; its 7 is not a unit.
		return nil, invalid("limit override: unit %v is not one of SECOND, MINUTE, HOUR, DAY, MONTH, YEAR", o.GetUnit())
	}
	mult := max(1, o.GetUnitMultiplier().GetValue())
	if mult > MaxOverrideMultiplier {
		return nil, invalid("limit override: unit_multiplier %d is more than %d", mult, MaxOverrideMultiplier)
	}
	if time.Duration(mult) > sluice.MaxWindow/length {
		return nil, invalid("limit override: %d × %v is longer than %v", mult, o.GetUnit(), sluice.MaxWindow)
	}
	window := time.Duration(mult) * length
	r := &rule{requestsPerUnit: o.GetRequestsPerUnit(), unit: unit}
	if o.GetUnitMultiplier().GetValue() > 1 {
		r.multiplier = mult
	}
	if r.requestsPerUnit == 0 {
		r.blocked = true
		r.label = "override-" + sluice.FixedWindow(1, window).Name()
		r.overID = recordID(r.label)
		r.unitSeconds = int64(window / time.Second)
		return r, nil
	}
	l := sluice.FixedWindow(int64(r.requestsPerUnit), window)
	r.limit = l.Named("override-" + l.Name())
	if err := r.limit.Err(); err != nil {
		return nil, invalid("limit override: %v", err)
	}
	return r.finish(), nil
}

func wrapUint32(v uint32) *wrapperspb.UInt32Value { return wrapperspb.UInt32(v) }
