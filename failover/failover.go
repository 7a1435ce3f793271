package failover

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-dev/sluice"
)

// OnError is what a Store does with a call its primary store could not
// decide: the on_store_error setting of a configuration. The zero value is Local,
// the default.
type OnError uint8

const (
	// Local ("local") decides on the local store instead, with every limit
	// divided by the number of instances that share the primary, starting
	// from the primary's last word on each key; what it admits is charged to
	// the primary when the primary is back (see Store).
	Local OnError = iota
	// Allow ("allow") admits every check: availability over protection.
	Allow
	// Deny ("deny") refuses every check: protection over availability.
	Deny
)

var onErrorNames = [...]string{Local: "local", Allow: "allow", Deny: "deny"}

// String returns the configuration name: "local", "allow" or "deny".
func (p OnError) String() string {
	if p.Valid() {
		return onErrorNames[p]
	}
	return fmt.Sprintf("on-store-error(%d)", uint8(p))
}

// Valid reports whether p is one of the declared policies.
func (p OnError) Valid() bool { return p <= Deny }

// ParseOnError returns the OnError named s: "local", "allow" or "deny".
func ParseOnError(s string) (OnError, error) {
	for p, name := range onErrorNames {
		if name == s {
			return OnError(p), nil
		}
	}
	return 0, fmt.Errorf("unknown on_store_error %q (use local, allow or deny)", s)
}

// DefaultTimeout is how long a Store waits for its primary before it counts
// the call as failed and applies its OnError rule.
const DefaultTimeout = 50 * time.Millisecond

// Options configures a Store. The zero value means: fall back to the local
// store, one instance, 50 ms per call, the default breaker.
type Options struct {
	// OnError is what to do when the primary cannot decide.
	OnError OnError
	// Timeout bounds each call to the primary (context.WithTimeout around
	// it, so the primary must honour its context; the stores of this module
	// do). DefaultTimeout (50 ms) when zero; no bound when negative. A
	// caller's own earlier deadline still wins, and is the caller's error.
	Timeout time.Duration
	// ChargeTimeout, when Timeout is negative (a primary that bounds each
	// of its calls itself, as Redis's Store does by its own timeout), bounds
	// each call that charges the primary before the primary decides (see
	// ChargeOnce) as Timeout would: the wait for a charge of its keys that
	// another call has under way, the charge, and the decision share it,
	// so that such a call waits no longer than one that only decides
	// (give the primary's own timeout). So do a call's wait, as a return
	// period ends, for the return calls still in flight (see Store) and
	// its decision. A wait or a charge that leaves the decision too little
	// time fails it, and the call is decided by the OnError rule. Zero or
	// negative, or with Timeout not negative: no bound of its own (the
	// wait for return calls then lasts a second at most).
	ChargeTimeout time.Duration
	// Instances is how many instances share the primary's quota, used by
	// Local to divide each limit; values below 1 mean 1, values above 65536
	// mean 65536.
	Instances int
	// Breaker configures the circuit breaker in front of the primary.
	Breaker BreakerOptions
	// OnFallback, when not nil, is called once for every call decided by the
	// OnError rule instead of the primary, after out is filled and before Apply
	// returns, with the reason: the primary's error, or ErrCircuitOpen when
	// the breaker kept the call from the primary. It runs on the caller's
	// goroutine, concurrently with other calls: keep it quick (count, not
	// log; OnBreakerChange is the place for a log line).
	OnFallback func(reason error)

	// Node, when not nil, names the node of the primary that decides a
	// check (for Redis: the master serving its key's slot in a Cluster, the
	// master's address otherwise). The Store keeps a circuit breaker per
	// node, so that the keys of healthy nodes stay on the primary while
	// another node is down (what a call spanning the down node admitted
	// locally on them is charged there at once: see Store), and counts per
	// node in Stats.Nodes. A call
	// whose checks live on several nodes goes to the primary only when none
	// of their breakers is open; its failure counts against each of them
	// unless the error names the node that failed (an error with a method
	// FailedNode() string, found with errors.As). Nil means one node, "".
	// It is called on every call, concurrently: keep it quick.
	Node func(c *sluice.Check) string
	// OnBreakerChange, when not nil, is called on every transition of a
	// node's breaker, after Breaker.OnStateChange, with the same
	// obligations: quick, no call to Apply.
	OnBreakerChange func(node string, from, to BreakerState)

	// ChargeOnce, when not nil, tells the primary of units admitted without
	// it: for each check, take up to Cost units of its limit for its key,
	// as many as the primary's state has left, without refusing (the units
	// were already admitted), unless the primary has taken the charge of
	// the check's id (ids[i] is checks[i]'s) before: then take nothing, and
	// succeed. Under Local, a Store calls it when the primary decides a key
	// again, before the primary decides it (see Store), each charge under
	// an id of its own. Its error is a store error: the call is decided by
	// the OnError rule, and each charge of the call is in doubt (the
	// primary may have taken it before the call failed): the next call
	// sends it again, under the same id and with no more units, until a
	// call succeeds, or until ChargeHorizon of its limit has passed since
	// it was first sent, when its units limit no one any more and it is
	// dropped. So a primary that remembers every id it took for
	// ChargeHorizon of its limit counts each charge exactly once. Redis's
	// Store.ChargeOnce is one.
	ChargeOnce func(ctx context.Context, checks []sluice.Check, ids []string) error
	// Charge is ChargeOnce without ids, used when ChargeOnce is nil: a
	// charge the primary took but whose call failed (a reply lost, a
	// timeout after the primary ran it) is taken again by the next call,
	// and its key refuses that many units more than it should until they
	// no longer count. Redis's Store.Charge is one.
	Charge func(ctx context.Context, checks []sluice.Check) error
	// Remember bounds how many keys' last answers from the primary a Local
	// Store keeps to start its fallback from, DefaultRemember (65,536) when
	// ≤ 0; Ledger bounds how many keys with units admitted locally it keeps
	// account of until charged, DefaultLedger (65,536) when ≤ 0 (a key whose
	// local decisions admitted nothing, peeks and refusals, takes no room).
	// Past either bound the Store still decides, less closely (see Store):
	// a key past Remember falls back to its whole share; past Ledger, its
	// units are not charged (Stats.Uncharged).
	Remember, Ledger int
}

// Stats counts what a Store has done since it was made.
type Stats struct {
	// StoreErrors counts calls the primary was asked and failed (an error
	// or a timeout): decisions, refunds, releases, Settle's charges and
	// those a fallback makes at once (see Store); not Probe's probes.
	// Calls the caller abandoned and invalid checks are not store errors
	// and are not counted.
	StoreErrors int64
	// FallbackDecisions counts calls decided by the OnError rule instead of the
	// primary: after a store error, or without asking the primary while the
	// breaker was open. A Local fallback that itself fails is not a decision
	// and is not counted.
	FallbackDecisions int64
	// BreakerOpens counts how often the breaker opened, re-openings after
	// a failed probe included.
	BreakerOpens int64
	// Breaker is the state now of the breaker that is furthest from
	// closed: open if any node's is open, else half-open if any is. A
	// breaker moves only when a call or a probe (Probe) goes through it:
	// one whose OpenFor has passed reads open until then, however long
	// the primary has been back. Run RunProbes beside a Store whose calls
	// may stop during an outage for Breaker to follow the primary.
	Breaker BreakerState
	// Nodes holds the counts of each node (see Options.Node) by name; with
	// no Options.Node, the one node "". A node no call and no probe has
	// been routed to for 10 s (of elapsed time: see BreakerOptions.Clock)
	// is left out, here and from Breaker, unless it is the only node: it is
	// no longer the primary's (a master replaced by its replica).
	Nodes map[string]NodeStats
	// Returning counts the nodes in their return period now, for all their
	// keys or for those of some of their limits: closed, but deciding
	// locally and charging at once (see Store).
	Returning int
	// Uncharged counts units admitted locally that will not be charged to
	// the primary: the ledger was full (Options.Ledger, keys with units
	// not yet charged), or no Charge was given.
	Uncharged int64
	// ReturnRefusals counts the FallbackDecisions that were calls refused
	// by this instance's share while it returned to a primary that answered
	// (reason ErrReturning itself, not wrapping a store error; a call of
	// concurrency checks only that the share admits then is a fallback
	// with another reason, not counted here): the price
	// of the return period, paid while the primary is up. They follow each
	// store error for the return period (see Store), so that a primary
	// that is up but misses Timeout now and then shows here.
	ReturnRefusals int64
}

// A Store is a sluice.Store that makes a remote primary store (Redis) safe
// to depend on: it bounds every call with a timeout, keeps calls away from a
// primary that keeps failing with a circuit breaker, and decides the calls
// the primary cannot decide by its OnError rule — Local, Allow or Deny — so that
// an outage costs neither a panic nor an unbounded wait.
//
// A call goes to the primary unless the breaker of one of its nodes (see
// Options.Node; one breaker without it) is open. If the primary answers,
// its answer is returned as it is. If it fails (an error, or no answer
// within Timeout), the failure is counted, fed to the breakers of the
// nodes it concerns, and the call is decided by the OnError rule:
//
//   - Local: by the local store, each check's Limit replaced by its share
//     for one of Instances instances: window algorithms admit ⌊Q/n⌋ (at
//     least 1) per window; buckets hold ⌊B/n⌋ (at least 1) and refill at
//     exactly Q/(n·W). A key the fallback meets for the first time since
//     the primary's last answer on it starts from ⌊R/n⌋ if that answer
//     (kept for up to Options.Remember keys, while its ResetAfter runs;
//     not a refusal for want of room, an Unavailable or an Undecided
//     status, which tell nothing of the key's use and leave the answer
//     kept as it was) said R remained: the local state is made to consume the difference,
//     once per answer, however full the ledger (below) is. An answer
//     replaces the one kept if it is known to be of a later decision (its
//     call was sent once the kept one had arrived, or Heard's decision
//     time is the later: see Heard), else only if it leaves no more, the two read under its
//     limit (a reload that changed the limit under the same ID: what the
//     kept one had used is used of the new parameters): of two calls in
//     flight at once, whose order the Store cannot tell, the one that left
//     less. A later answer arriving first is not replaced by a higher
//     remainder decided before it. A check that
//     fits its shared limit but not this instance's share gets RetryAfter
//     OpenFor (the primary may be back by then), not Never. Any other
//     refusal by the share reports the share's own RetryAfter, even when
//     the primary may be asked again sooner: the share is what binds
//     while the primary is away and, under Local with a Charge, through
//     the return period after it is back (see below), so the next probe
//     bounds nothing; a wait until then would have every
//     refused client ask again each OpenFor for as long as the outage
//     lasts, to be refused again. A client told too long a wait after the
//     primary returns loses some availability, never protection.
//   - Allow: every check Allowed, Unavailable, with Remaining its limit's
//     Burst (as if untouched) and no wait.
//   - Deny: every check refused, Remaining 0, Unavailable, with RetryAfter
//     and ResetAfter the breaker's OpenFor: the soonest the primary may be
//     asked again.
//
// Under every OnError rule a check whose Cost exceeds its limit's Burst is refused
// with RetryAfter sluice.Never, as every store refuses it; that needs no
// store. Every decision made by the OnError rule is counted in Stats and reported
// to OnFallback, so a caller can always tell it from the primary's.
//
// Under Local with a ChargeOnce (or a Charge), the Store keeps account of what it admits
// locally per key and limit ID and charges it to the primary before the
// primary decides the key again: the units the local state still counts (a window
// not yet over, tokens not yet refilled), no more than were admitted, in
// one charge call with up to four other keys of the same nodes (two when a
// charge in doubt goes first: see Options.ChargeOnce). It keeps account of
// up to Options.Ledger keys with units not yet charged (past that,
// Stats.Uncharged counts the units); a key whose local decisions admitted
// nothing (peeks, refusals) takes no room, so refused calls cannot crowd
// out others' units. A limit changed under the same ID (a reload) keeps
// its key's account: the units admitted under the old limit and the new
// are charged under the new. A call decided locally because some of its
// nodes failed or had their breaker open charges what it admitted on its
// other nodes, which answer, at once, within its bound (Timeout, or
// ChargeTimeout: what the failed call left of it), so that their keys stay
// the primary's alone (a per-user key next to a global one on the failed
// node), and another instance deciding them there alone counts these
// units. The calls
// of a node whose probe succeeds, on which this instance decided locally
// (a call that failed, its breaker closed or open, or such a charge at
// once that failed), that failed to answer
// a call made around the Store (Unreachable), or that is first met while
// keys are owed (a replica promoted, a new master named) return; so do,
// on a node whose charge at once the call's bound cut short (a call that
// waited its whole Timeout for a node that stopped answering), the calls
// of the keys of each limit the call admitted there, and only those: the
// node's other keys stay the primary's alone. Each
// is decided by this instance's share on the local store and, if
// that admits it, by the primary too, after its keys' accounts are
// charged, and it is admitted only if both admit it: the primary's
// decision, with its statuses (whose Remaining the share may be below), or
// the share's refusal, a fallback reported to OnFallback as ErrReturning.
// The first that reaches the primary starts a return period of four
// OpenFor (2 s with the defaults; elapsed time, which a clock set back does
// not lengthen: see BreakerOptions.Clock) in which every call returns (of
// the node, or of the limit's keys on it), so that
// every instance sharing the primary, each probing every OpenFor, has
// charged what it admitted before any decides on the primary alone, and
// none admits beyond its share meanwhile — unless its probes keep failing
// for longer (an instance still cut off from the primary, or too slow to
// answer within Timeout), whose local decisions in the window the others
// return in are then beyond the promise, by at most its share. A call made
// as the period ends waits for the return calls still in flight, within
// its Timeout, so that what they charge reaches the primary before the
// primary decides alone. A charge that fails is a store error: the
// accounts stay open for a later call, their charges in doubt, sent again
// under their ids and taken once (see Options.ChargeOnce and the package
// documentation).
// Concurrency leases are never charged, and a return call decides them
// locally only (see package redis's documentation for the bounds this
// gives): a return call of concurrency checks only is a fallback, admitted
// or refused by the share, and only its refusal is an ErrReturning. A
// return call whose caller gives up (below) leaves nothing taken from the
// share and nothing owed: its leases are released and its units refunded
// on the local store.
//
// A caller that gives up (its ctx is done, before or during the call) gets
// an error wrapping ctx.Err(), never a fallback decision, and its call does
// not count against the primary. Errors wrapping sluice.ErrInvalidCheck or
// sluice.ErrInvalidLimit are the caller's and are returned as they are. If
// the local store fails too, the error wraps sluice.ErrStoreUnavailable.
//
// Recovery is automatic: OpenFor after the breaker opened, one probe call
// goes to the primary (the next call, or, on a Store that gets none, a
// probe of Probe, which RunProbes runs beside it); its success closes the
// breaker and every later call is the primary's again (after the return
// period, under Local with a Charge). With the defaults a primary that is
// back serves decisions again within about 550 ms (500 ms open plus at
// most one 50 ms probe that failed just before it came back). Under Local
// with a Charge it decides alone again the return period (2 s) after its
// first success that follows the last failure: 2 s after it is back when
// the breaker stayed closed (a failure or four), at most 2.55 s when the
// failures opened it. A call
// that fails during the return period (a timeout under load) and is
// admitted locally, failures that open the breaker, or an Unreachable for
// the node, start the period again from the next success, so a primary
// that keeps missing Timeout now and then keeps an instance returning,
// each of its calls admitted only within its share (Stats.ReturnRefusals
// counts the calls its share refuses meanwhile).
//
// A primary that is a CachingStore (overlimit.Cache) is recognised: the
// calls it answers without asking its own store say nothing about that
// store's health, so they neither close the breaker nor reset its failure
// count. Put the cache inside the Store, around the remote store, so that it
// only remembers the remote store's answers:
//
//	failover.New(overlimit.New(redisStore, overlimit.Options{}),
//		memory.New(), failover.Options{Instances: 4})
//
// A Store is safe for concurrent use when its stores are. The zero Store has
// no stores: its Apply, Release and Refund return an error wrapping
// sluice.ErrStoreUnavailable. Make one with New.
type Store struct {
	primary    sluice.Store
	cache      CachingStore // primary, if it can answer without its store
	local      sluice.Store
	onError    OnError
	timeout    time.Duration
	chargeFor  time.Duration // bounds a call that charges, when timeout < 0
	instances  int64
	onFallback func(error)
	nodeOf     func(*sluice.Check) string
	nodes      nodes
	openFor    time.Duration
	returnFor  time.Duration    // a node's return period after a probe succeeds
	now        func() time.Time // Breaker.Clock, or time.Now
	clock      func() time.Time // Breaker.Clock: the return period's clock (nil: monotonic)
	tl         timeline         // the return period's elapsed time, on clock
	charge     func(ctx context.Context, checks []sluice.Check, ids []string) error
	memo       *memo         // Local only
	ledger     *ledger       // Local only
	opened     chan struct{} // a breaker opened: wakes RunProbes

	storeErrors atomic.Int64
	fallbacks   atomic.Int64
	refusals    atomic.Int64 // fallbacks refused by the share while returning
	scratch     sync.Pool    // *[]sluice.Check for the scaled checks of Local
	// lastFallback is when a call was last decided by the OnError rule,
	// on Store.elapsed plus one (0: never): see FellBack.
	lastFallback atomic.Int64

	sharesMu sync.RWMutex
	shares   map[sluice.Limit]sluice.Limit // limit → this instance's share, for Local
}

// returnPeriods is a node's return period in breaker periods (OpenFor):
// long enough for every instance, probing every OpenFor, to probe and
// charge, with room for a few probes that miss the timeout.
const returnPeriods = 4

// maxInstances bounds Options.Instances, as sluice.Limit.Scale bounds its
// factors.
const maxInstances = 1 << 16

// maxShares bounds Store.shares; limits are few (they come from the
// configuration), so overflowing it just starts it afresh.
const maxShares = 1024

// A CachingStore is a sluice.Store that answers some calls itself, without
// asking the store behind it, and says which: overlimit.Cache is one. Such
// calls say nothing about the health of the store behind it, so a Store
// whose primary is a CachingStore keeps them away from its breaker.
type CachingStore interface {
	sluice.Store
	// ApplyCached is Apply that also reports whether the call was answered
	// without asking the store behind (cached is false whenever err is not
	// nil).
	ApplyCached(ctx context.Context, checks []sluice.Check, out []sluice.Status) (cached bool, err error)
}

// New returns a Store in front of primary that decides by opts.OnError when
// primary cannot. local is the store Local decides on (typically a
// memory.Store) and may be nil for the other policies. It returns an error
// if primary is nil, if opts.OnError is not valid, or if local is nil under
// Local.
func New(primary, local sluice.Store, opts Options) (*Store, error) {
	switch {
	case primary == nil:
		return nil, errors.New("failover: New with a nil primary store")
	case !opts.OnError.Valid():
		return nil, fmt.Errorf("failover: New with invalid OnError %v", opts.OnError)
	case local == nil && opts.OnError == Local:
		return nil, errors.New("failover: New with OnError Local needs a local store")
	}
	f := &Store{
		primary:    primary,
		local:      local,
		onError:    opts.OnError,
		timeout:    opts.Timeout,
		chargeFor:  opts.ChargeTimeout,
		instances:  int64(min(max(opts.Instances, 1), maxInstances)),
		onFallback: opts.OnFallback,
		nodeOf:     opts.Node,
		nodes:      nodes{opts: opts.Breaker, onChange: opts.OnBreakerChange},
		openFor:    (&breaker{opts: opts.Breaker}).OpenFor(),
		returnFor:  returnPeriods * (&breaker{opts: opts.Breaker}).OpenFor(),
		charge:     opts.ChargeOnce,
		now:        opts.Breaker.Clock,
		clock:      opts.Breaker.Clock,
	}
	if f.now == nil {
		f.now = time.Now
	}
	if charge := opts.Charge; f.charge == nil && charge != nil {
		f.charge = func(ctx context.Context, checks []sluice.Check, _ []string) error { return charge(ctx, checks) }
	}
	f.opened = make(chan struct{}, 1)
	f.nodes.onOpen = func() {
		select {
		case f.opened <- struct{}{}:
		default: // RunProbes has yet to read the last one
		}
	}
	if f.nodeOf == nil {
		f.nodes.get("") // the one node, in Stats from the start
	}
	if f.onError == Local {
		f.memo, f.ledger = newMemo(opts.Remember), newLedger(opts.Ledger)
		// A node first met while keys are owed (a replica promoted, a new
		// master named) may start in its return period (see returning).
		f.nodes.onCreate = func(n *node) { n.fresh.Store(f.ledger.size.Load() > 0) }
	}
	f.cache, _ = primary.(CachingStore)
	if f.timeout == 0 {
		f.timeout = DefaultTimeout
	}
	f.scratch.New = func() any { s := make([]sluice.Check, 0, 8); return &s }
	return f, nil
}

// Stats returns the current counts. Each field is read atomically, but not
// all at the same instant.
func (f *Store) Stats() Stats {
	if f.primary == nil {
		return Stats{Nodes: map[string]NodeStats{}}
	}
	st := Stats{
		StoreErrors:       f.storeErrors.Load(),
		FallbackDecisions: f.fallbacks.Load(),
		ReturnRefusals:    f.refusals.Load(),
		Nodes:             make(map[string]NodeStats),
	}
	if f.ledger != nil {
		st.Uncharged = f.ledger.uncharged.Load()
	}
	now := f.elapsed()
	f.nodes.each(now, func(n *node) {
		ns := NodeStats{Breaker: n.breaker.State(), BreakerOpens: n.breaker.Opens(),
			StoreErrors: n.storeErrors.Load(), FallbackDecisions: n.fallbacks.Load(),
			Returning: now < n.returnUntil.Load()}
		n.marks.each(func(k *mark) { ns.Returning = ns.Returning || now < k.returnUntil.Load() })
		if ns.Returning {
			st.Returning++
		}
		st.Nodes[n.name] = ns
		st.BreakerOpens += ns.BreakerOpens
		if ns.Breaker == BreakerOpen || ns.Breaker == BreakerHalfOpen && st.Breaker == BreakerClosed {
			st.Breaker = ns.Breaker
		}
	})
	return st
}

// errZero is the error of the zero Store's calls.
func errZero() error {
	return fmt.Errorf("failover: %w: the zero Store has no stores (make one with New)", sluice.ErrStoreUnavailable)
}

// Apply implements sluice.Store. An out not as long as checks is an error
// wrapping sluice.ErrInvalidCheck, as an invalid check is: neither is a store
// failure.
func (f *Store) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	if f.primary == nil {
		return errZero()
	}
	if len(out) != len(checks) {
		return fmt.Errorf("failover: %w: %d checks with %d statuses", sluice.ErrInvalidCheck, len(checks), len(out))
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("failover: %w", err)
	}
	var (
		nodeBuf   [4]*node
		ticketBuf [4]ticket
	)
	ns := f.nodesOf(checks, nodeBuf[:0])
	tks := ticketBuf[:0]
	for _, n := range ns {
		tk, ok := n.breaker.Allow()
		if !ok {
			f.release(ns, tks)
			return f.fallback(ctx, checks, out, []*node{n}, ErrCircuitOpen, time.Time{})
		}
		tks = append(tks, tk)
	}
	var markBuf [4]*mark
	h, back, waited := f.returning(checks, ns, tks, markBuf[:0])
	if back {
		return f.returnCall(ctx, checks, out, ns, tks, h)
	}
	begun := waited
	if begun.IsZero() && len(ns) > 1 {
		begun = time.Now() // bounds the charge a fallback makes at once (see owe)
	}
	var sent time.Time // orders the answer in the memo (see memo.put)
	if f.memo != nil {
		sent = f.now()
	}
	cached, err := f.callPrimary(ctx, checks, out, ns, waited)
	switch {
	case err == nil:
		for j, n := range ns {
			if cached {
				n.breaker.abandon(tks[j])
			} else {
				n.breaker.Done(tks[j], true)
			}
		}
		if f.memo != nil && !cached {
			f.memo.put(checks, out, nil, sent, f.now())
		}
		return nil
	case callerGone(ctx) != nil:
		f.release(ns, tks)
		return fmt.Errorf("failover: caller gave up: %w (primary store: %v)", callerGone(ctx), err)
	case errors.Is(err, sluice.ErrInvalidCheck) || errors.Is(err, sluice.ErrInvalidLimit):
		f.release(ns, tks)
		return fmt.Errorf("failover: %w", err)
	}
	f.storeErrors.Add(1)
	blamed := blame(err, ns)
	for j, n := range ns {
		if len(blamed) == len(ns) || blamed[0] == n {
			n.storeErrors.Add(1)
			f.failed(n, tks[j], checks)
		} else {
			n.breaker.abandon(tks[j])
		}
	}
	return f.fallback(ctx, checks, out, blamed, fmt.Errorf("primary store: %w", err), begun)
}

// release gives back the tickets tks of nodes ns.
func (f *Store) release(ns []*node, tks []ticket) {
	for j, t := range tks {
		ns[j].breaker.abandon(t)
	}
}

// blame returns the nodes of ns that err is about: the one it names, or
// all of them.
func blame(err error, ns []*node) []*node {
	var named interface{ FailedNode() string }
	if len(ns) > 1 && errors.As(err, &named) {
		for _, n := range ns {
			if n.name == named.FailedNode() {
				return []*node{n}
			}
		}
	}
	return ns
}

// callPrimary charges what the call's keys (and a few others of its nodes)
// owe from local decisions, then asks the primary, all within the timeout
// from since: when the call began to wait for return calls in flight (see
// returning), or now when since is zero.
func (f *Store) callPrimary(ctx context.Context, checks []sluice.Check, out []sluice.Status, ns []*node, since time.Time) (cached bool, err error) {
	owing := f.ledger != nil && f.ledger.size.Load() > 0
	bound := f.timeout
	if bound < 0 && (owing || !since.IsZero()) {
		bound = f.chargeFor // the primary bounds only each round trip
	}
	if bound > 0 {
		if since.IsZero() {
			since = time.Now()
		}
		// A caller's deadline that comes first bounds the call already.
		if d, ok := ctx.Deadline(); !ok || d.After(since.Add(bound)) {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, since.Add(bound))
			defer cancel()
		}
	}
	if owing {
		if err := f.settle(ctx, checks, ns); err != nil {
			return false, err
		}
	}
	if f.cache != nil {
		return f.cache.ApplyCached(ctx, checks, out)
	}
	return false, f.primary.Apply(ctx, checks, out)
}

// fallback decides checks by the OnError rule because of reason, counting the
// decision against the nodes blamed. begun is when the call began (zero:
// now): it bounds the charge a Local decision makes at once (see owe).
func (f *Store) fallback(ctx context.Context, checks []sluice.Check, out []sluice.Status, blamed []*node, reason error, begun time.Time) error {
	switch f.onError {
	case Allow:
		for i := range checks {
			out[i] = sluice.Status{Allowed: true, Remaining: checks[i].Limit.Burst(), Unavailable: true}
		}
	case Deny:
		d := f.openFor
		for i := range checks {
			out[i] = sluice.Status{RetryAfter: d, ResetAfter: d, Unavailable: true}
		}
	default:
		if err := f.applyLocal(ctx, checks, out); err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return fmt.Errorf("failover: caller gave up: %w (%v)", cerr, reason)
			}
			return fmt.Errorf("failover: %w; local fallback: %w", unavailable(reason), err)
		}
		if err := f.owe(ctx, checks, out, blamed, begun); err != nil {
			return fmt.Errorf("failover: caller gave up: %w (%v)", err, reason)
		}
	}
	for i := range checks {
		if c := &checks[i]; c.Cost > c.Limit.Burst() {
			out[i] = sluice.Status{Remaining: out[i].Remaining, ResetAfter: out[i].ResetAfter, RetryAfter: sluice.Never}
		}
	}
	f.counted(blamed, reason)
	return nil
}

// counted counts a decision made by the OnError rule because of reason against
// the nodes blamed, and reports it to OnFallback.
func (f *Store) counted(blamed []*node, reason error) {
	f.fallbacks.Add(1)
	if reason == ErrReturning {
		f.refusals.Add(1)
	}
	at := f.elapsed() + 1
	f.lastFallback.Store(at)
	for _, n := range blamed {
		n.fallbacks.Add(1)
		n.lastFallback.Store(at)
	}
	if f.onFallback != nil {
		f.onFallback(reason)
	}
}

// applyLocal decides checks on the local store with each limit replaced by
// this instance's share, each key met for the first time since the
// primary's last word on it first brought down to its share of that word
// (see seed). When the local store has no room to bring an enforcing
// limit's key down, the call is refused for want of room, every check's
// status a sluice.Status.NoRoom refusal, nothing counted. What it admits
// is owed to the primary unless the primary decides the checks too (see
// owe).
func (f *Store) applyLocal(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	p := f.scratch.Get().(*[]sluice.Check)
	shares := append((*p)[:0], checks...)
	if f.instances > 1 {
		for i := range shares {
			shares[i].Limit = f.share(shares[i].Limit)
		}
	}
	noRoom, refused, err := f.seed(ctx, checks, shares)
	switch {
	case err != nil:
	case refused:
		for i := range out {
			out[i] = sluice.Status{ResetAfter: noRoom.ResetAfter, RetryAfter: noRoom.RetryAfter, NoRoom: true}
		}
	default:
		err = f.local.Apply(ctx, shares, out)
	}
	clear(shares) // keep no keys alive in the pool
	*p = shares[:0]
	f.scratch.Put(p)
	if err != nil {
		return err
	}
	for i := range checks {
		// Too big for this instance's share, not for the shared limit: it
		// fits once the primary is back.
		if out[i].RetryAfter == sluice.Never && checks[i].Cost <= checks[i].Limit.Burst() {
			out[i].RetryAfter = f.openFor
		}
	}
	markLocal(out)
	return nil
}

// admitted reports whether out admits the call of checks: every check
// allowed, or in shadow mode.
func admitted(checks []sluice.Check, out []sluice.Status) bool {
	for i := range checks {
		if !out[i].Allowed && !checks[i].Limit.Shadow() {
			return false
		}
	}
	return true
}

// owe keeps account of what a local decision admitted without the
// primary, to be charged to it, and marks what fell back (see returning):
// each node of the admitted keys that the decision blames (it failed, or
// its breaker was open). The others answer (the call was decided locally
// because a node blamed could not decide it): the units of their keys
// are charged at once (see chargeNow), within the bound of the call,
// which began at begun (zero: now), so that their keys stay the
// primary's alone. A node whose charge fails falls back too; on one
// whose charge the call's bound cut short (a call that waited its whole
// Timeout for a node that stopped answering), the limits of those keys
// fall back (see mark), its other keys staying the primary's.
//
// ctx is the caller's. If it is done before the charge at once is, the
// call is no decision: what the local decision gave it goes back (see
// giveBack), out of the ledger's accounts too, the nodes that answer are
// not marked, and owe returns ctx's error. Units in a charge sent
// meanwhile stay in it, in doubt, as a refund leaves them (see Refund):
// erring on the side of refusing.
func (f *Store) owe(ctx context.Context, checks []sluice.Check, out []sluice.Status, blamed []*node, begun time.Time) error {
	if f.ledger == nil || !admitted(checks, out) {
		return nil
	}
	f.ledger.add(checks, out)
	var now []sluice.Check // the admitted keys of nodes that answer
	var at, answer []*node // each key's node; the nodes
	for i := range checks {
		c := &checks[i]
		if c.Cost == 0 || !out[i].Allowed || !chargeable(c.Limit) {
			continue
		}
		name := f.nodeName(c)
		n := f.nodes.get(name)
		if f.charge == nil || slices.Contains(blamed, n) || n.breaker.State() != BreakerClosed {
			n.fellBack.Store(true)
			continue
		}
		now, at = append(now, *c), append(at, n)
		if !slices.Contains(answer, n) {
			answer = append(answer, n)
		}
	}
	if len(now) == 0 {
		return nil
	}
	switch f.chargeNow(ctx, now, answer, begun) {
	case chargeFailed:
		for _, n := range answer {
			n.fellBack.Store(true)
		}
	case chargeCutShort:
		if err := ctx.Err(); err != nil { // the caller's, not the bound's
			f.giveBack(context.WithoutCancel(ctx), checks, out, true)
			return err
		}
		for i, n := range at {
			n.fellBackOn(&now[i])
		}
	}
	return nil
}

// share returns this instance's share of l, l.Scale(1, f.instances),
// remembered: building a limit costs allocations, and during an outage every
// call needs its shares.
func (f *Store) share(l sluice.Limit) sluice.Limit {
	f.sharesMu.RLock()
	s, ok := f.shares[l]
	f.sharesMu.RUnlock()
	if ok {
		return s
	}
	s = l.Scale(1, f.instances)
	f.sharesMu.Lock()
	if len(f.shares) >= maxShares || f.shares == nil {
		f.shares = make(map[sluice.Limit]sluice.Limit)
	}
	f.shares[l] = s
	f.sharesMu.Unlock()
	return s
}

// unavailable returns err wrapping sluice.ErrStoreUnavailable.
func unavailable(err error) error {
	if errors.Is(err, sluice.ErrStoreUnavailable) {
		return err
	}
	return fmt.Errorf("%w: %w", sluice.ErrStoreUnavailable, err)
}

// callerGone returns ctx's error, or context.DeadlineExceeded once ctx's
// deadline has passed though its timer has not ended it yet: a call that
// failed then failed for its caller's lack of time, not for the store's.
func callerGone(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return context.DeadlineExceeded
	}
	return nil
}
