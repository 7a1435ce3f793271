package failover

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/sluice-dev/sluice"
)

// seed brings each key of checks that the local fallback meets for the
// first time since the primary's last word on it down to this instance's
// share of what that word said was left: a local state holding more than
// ⌊remaining/instances⌋ units is made to consume the difference. shares
// are checks with this instance's limits. Keys the primary said nothing
// of, or whose last word has expired (the limit has since been full
// again), start from the local state as it is. Whether a key was met
// since its last word is kept with the word (see memo.start), not in the
// ledger: a full ledger costs the charge-back of the units it cannot keep
// account of, never the primary's last word.
//
// A key whose state the local store has no room to keep (a memory store
// under memory.WithMaxKeys full of states it may not evict) cannot be
// brought down: its word is kept unstarted, to be started from once there
// is room, so that the key never starts from more than its share of it.
// When such a key's limit enforces, seed reports the refusal for want of
// room (sluice.Status.NoRoom) that the call must be answered with, and
// true: deciding the call would decide that key from its whole share, if
// room came back meanwhile.
func (f *Store) seed(ctx context.Context, checks, shares []sluice.Check) (sluice.Status, bool, error) {
	var idx []int
	var target []int64
	now := f.now()
	for i := range checks {
		c := &checks[i]
		if !chargeable(c.Limit) {
			continue
		}
		if w, ok := f.memo.start(c, now); ok {
			idx = append(idx, i)
			target = append(target, min(w.remaining/f.instances, shares[i].Limit.Burst()))
		}
	}
	if len(idx) == 0 {
		return sluice.Status{}, false, nil
	}
	take := make([]sluice.Check, len(idx))
	for j, i := range idx {
		take[j] = sluice.Check{Key: checks[i].Key, Limit: shares[i].Limit}
	}
	unwritten, noRoom, err := f.lowerTo(ctx, take, target)
	refused := false
	for _, j := range unwritten {
		c := &checks[idx[j]]
		f.memo.unstart(c)
		refused = refused || !c.Limit.Shadow()
	}
	if err != nil || !refused || !noRoom.NoRoom {
		return sluice.Status{}, false, err
	}
	return noRoom, true, nil
}

// lowerTo makes the local state of each check of take (a key with this
// instance's share of its limit) that holds more than target[j] units
// consume the difference: one peek of them all, then one call taking the
// excess. take's costs are overwritten. It returns the indexes in take of
// the states it was to lower and did not: every one of them when the
// store refused the call taking the excess, which then changed nothing,
// else those it had no room to keep (a shadow check's, whose refusal does
// not refuse the call); and, when the store refused any of them for want
// of room, its refusal with the longest RetryAfter.
func (f *Store) lowerTo(ctx context.Context, take []sluice.Check, target []int64) ([]int, sluice.Status, error) {
	st := make([]sluice.Status, len(take))
	for j := range take {
		take[j].Cost = 0
	}
	if err := f.local.Apply(ctx, take, st); err != nil { // peek
		return nil, sluice.Status{}, err
	}
	var of []int // of[n]: the index in take of the nth check taken from
	n := 0
	for j := range take {
		if extra := st[j].Remaining - target[j]; extra > 0 {
			take[n] = take[j]
			take[n].Cost = extra
			of = append(of, j)
			n++
		}
	}
	if n == 0 {
		return nil, sluice.Status{}, nil
	}
	if err := f.local.Apply(ctx, take[:n], st[:n]); err != nil {
		return nil, sluice.Status{}, err
	}
	all := !admitted(take[:n], st[:n])
	var unwritten []int
	var noRoom sluice.Status
	for k := range n {
		if s := &st[k]; all || s.NoRoom {
			unwritten = append(unwritten, of[k])
			if s.NoRoom && (!noRoom.NoRoom || s.RetryAfter > noRoom.RetryAfter) {
				noRoom = *s
			}
		}
	}
	return unwritten, noRoom, nil
}

// settle charges the primary with what this instance admitted locally on
// the keys of checks, and on up to settleExtra other keys of the nodes ns,
// before the primary decides them: one charge call (two when a charge in
// doubt goes first), bounded by ctx. An error leaves the accounts open, to
// be charged by a later call, their charges in doubt.
func (f *Store) settle(ctx context.Context, checks []sluice.Check, ns []*node) error {
	return f.settleOr(ctx, checks, ns, false)
}

// settleOr is settle; with contact, a call that owes nothing still reaches
// the primary (a peek of checks: Charge skips concurrency checks, so a
// Charge of nothing may never reach it), since its outcome tells whether
// the primary is back.
func (f *Store) settleOr(ctx context.Context, checks []sluice.Check, ns []*node, contact bool) error {
	taken, err := f.ledger.take(ctx, checks, func(a *account) bool {
		return f.nodeOf == nil || slices.Contains(ns, f.nodes.get(f.nodeOf(&a.check)))
	})
	if err != nil {
		return err
	}
	if f.charge == nil { // nothing to charge: close the accounts
		for _, a := range taken {
			f.ledger.uncharged.Add(a.charged)
		}
		f.ledger.done(taken, true)
		return nil
	}
	var first, then []charge
	if len(taken) > 0 {
		first, then, err = f.owed(ctx, taken)
	}
	if err == nil && len(first) == 0 && contact {
		peeks := make([]sluice.Check, len(checks))
		for i := range checks {
			peeks[i] = sluice.Check{Key: checks[i].Key, Limit: checks[i].Limit}
		}
		err = f.primary.Apply(ctx, peeks, make([]sluice.Status, len(peeks)))
	}
	return f.charged(ctx, taken, first, then, err)
}

// charged sends the charges of the claimed accounts taken, unless err is
// already set: first, then, once first has succeeded, then (see owed). It
// records each round's outcome in the accounts' plans and ends the claim,
// settled if every charge succeeded.
func (f *Store) charged(ctx context.Context, taken []*account, first, then []charge, err error) error {
	if err == nil && len(first) > 0 {
		err = f.send(ctx, first, func(p *plan, o outcome) { p.first = o })
	}
	if err == nil && len(then) > 0 {
		err = f.send(ctx, then, func(p *plan, o outcome) { p.second = o })
	}
	if len(taken) > 0 {
		f.ledger.done(taken, err == nil)
	}
	return err
}

// send makes one charge call of cs and records its outcome in their
// accounts' plans with set.
func (f *Store) send(ctx context.Context, cs []charge, set func(*plan, outcome)) error {
	checks := make([]sluice.Check, len(cs))
	ids := make([]string, len(cs))
	for i, c := range cs {
		checks[i], ids[i] = c.check, c.id
	}
	err := f.charge(ctx, checks, ids)
	o := succeeded
	if err != nil {
		o = failed
	}
	for _, c := range cs {
		set(&c.a.plan, o)
	}
	return err
}

// Settle charges the primary now with everything this Store admitted
// locally and has not charged yet (see Store), key by key in calls of at
// most sluice.MaxChecks, for a program about to close, whose accounts
// would otherwise end with it and the fleet admit their units again. It
// returns at the first error, ctx's or the primary's, leaving the accounts
// not charged open (a later call charges them as usual, a charge in doubt
// under its id). A charge the primary fails is a store error (counted in
// Stats, against the nodes of its keys) and its error wraps
// sluice.ErrStoreUnavailable; one cut short by ctx wraps ctx's error and
// is not counted. With neither Options.ChargeOnce nor Options.Charge there
// is nothing to charge. It is safe to call
// concurrently with decisions, and on the zero Store, which has nothing to
// settle.
func (f *Store) Settle(ctx context.Context) error {
	if f.ledger == nil || f.charge == nil {
		return nil
	}
	for f.ledger.size.Load() > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		taken := f.ledger.takeAny(sluice.MaxChecks)
		if len(taken) == 0 {
			return nil // the rest is being charged by calls under way
		}
		first, then, err := f.owed(ctx, taken)
		if err != nil { // the local store's: nothing is sent
			_ = f.charged(ctx, taken, nil, nil, err) // ends the claim
			return fmt.Errorf("failover: settle: local store: %w", err)
		}
		if err = f.charged(ctx, taken, first, then, nil); err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return fmt.Errorf("failover: settle: %w (primary store: %v)", cerr, err)
			}
			f.settleFailed(taken, err)
			return fmt.Errorf("failover: settle: %w", unavailable(fmt.Errorf("primary store: %w", err)))
		}
	}
	return nil
}

// settleFailed counts the failed charge call of Settle, for the accounts
// taken, as a store error: in all, and against the nodes it concerns.
func (f *Store) settleFailed(taken []*account, err error) {
	checks := make([]sluice.Check, len(taken))
	asked := make([]int64, len(taken))
	for i, a := range taken {
		checks[i], asked[i] = a.check, 1
	}
	f.sideFailed(context.Background(), checks, asked, err)
}

// ErrReturning is the reason a Store gives (to Options.OnFallback) for a
// call refused by this instance's share while it returns to a primary that
// is back (see Store); a call the primary decides then is the primary's,
// and one the primary fails is reported with ErrReturning wrapping the
// primary's error. It wraps sluice.ErrStoreUnavailable, as every fallback
// reason does.
var ErrReturning = fmt.Errorf("%w: returning to the primary: refused by this instance's share", sluice.ErrStoreUnavailable)

// errAdmittedByShare is the reason a Store gives (to Options.OnFallback)
// for a call its share admitted while it returns to a primary that
// answers, and that the primary did not decide: one of concurrency checks
// only, which a return call decides locally only (see returnPrimary). It
// is no refusal: Stats.ReturnRefusals does not count it.
var errAdmittedByShare = fmt.Errorf("%w: returning to the primary: admitted by this instance's share (concurrency is decided locally)", sluice.ErrStoreUnavailable)

// returning reports whether a call of checks on ns must be decided by
// returnCall: a Local Store with a Charge whose breaker lets a probe
// through, that has decided locally on one of ns since its last return
// period began (its breaker closed: a call that failed on its own) or was
// told one of ns was unreachable (Unreachable), or that is within the
// return period of one of ns (after a successful return call, or from its
// first call when keys were owed then) — or the same of the mark of one
// of its checks' limits (see mark): a node that did not fail returns only
// for the keys of the limits it decided locally because another could not.
//
// A call that returns is counted, in h, on ns (on its marks only, when no
// node of ns returns) until returnCall ends. A call that does not waits, up
// to the Store's timeout, until no return call on ns, nor of its marks,
// is in flight: a decision made just before a return period ends has
// reached the primary before the primary decides alone again. waited is
// when that wait began, zero when there was none: the call's decision
// shares its timeout with the wait. ks is room for the marks.
func (f *Store) returning(checks []sluice.Check, ns []*node, tks []ticket, ks []*mark) (h hold, back bool, waited time.Time) {
	if f.charge == nil || f.ledger == nil {
		return hold{}, false, time.Time{}
	}
	h = hold{nodes: ns, marks: f.marksOf(checks, ns, ks)}
	for _, n := range ns {
		n.returns.Add(1) // before the clock is read: see drain
	}
	for _, k := range h.marks {
		k.returns.Add(1)
	}
	now := f.elapsed()
	for j, n := range ns {
		if n.fresh.Load() && n.fresh.CompareAndSwap(true, false) && f.ledger.owes(n.name, f.nodeOf) {
			// First met while this instance owes some of its keys, as one
			// whose probe succeeded: every instance must have charged
			// before any decides there.
			n.returnUntil.Store(now + int64(f.returnFor))
		}
		if BreakerState(tks[j].word&3) == BreakerHalfOpen || n.fellBack.Load() || now < n.returnUntil.Load() {
			back = true
		}
	}
	if back {
		return h, true, time.Time{}
	}
	for _, k := range h.marks {
		if k.fellBack.Load() || now < k.returnUntil.Load() {
			// The limits' return: the node's other calls need not wait
			// for it.
			hold{nodes: ns}.release()
			return hold{marks: h.marks}, true, time.Time{}
		}
	}
	h.release()
	return hold{}, false, f.drain(h)
}

// drain waits until no return call counted in h (a call's nodes and
// marks) is in flight, at most the bound of a call that charges (a charge
// in flight is bounded by it too: see chargeBound), and returns when it
// began to wait, zero if it did not. A call counted after the end of a
// return period does not return, so the count drains.
func (f *Store) drain(h hold) (waited time.Time) {
	var deadline time.Time
	wait := func(returns *atomic.Int64) bool {
		for returns.Load() > 0 {
			if deadline.IsZero() {
				waited = time.Now()
				deadline = waited.Add(f.chargeBound())
			} else if time.Now().After(deadline) {
				return false
			}
			time.Sleep(50 * time.Microsecond)
		}
		return true
	}
	for _, n := range h.nodes {
		if !wait(&n.returns) {
			return waited
		}
	}
	for _, k := range h.marks {
		if !wait(&k.returns) {
			return waited
		}
	}
	return waited
}

// chargeBound is how long a call that charges the primary before it
// decides may take: Options.Timeout, or Options.ChargeTimeout when the
// primary bounds its calls itself, or a second without either.
func (f *Store) chargeBound() time.Duration {
	switch {
	case f.timeout > 0:
		return f.timeout
	case f.chargeFor > 0:
		return f.chargeFor
	}
	return time.Second
}

// returnCall decides a call while the Store returns to its primary: by
// the local store, each limit this instance's share as during the outage,
// and, if that admits it, by the primary too, after what the call's keys
// (and a few others) owe is charged to it. The call is admitted only if
// both admit it: other instances may still owe the primary what they
// admitted during the outage, which the share keeps this instance's
// admissions within, and the primary counts every unit it admits, so an
// instance that decides on the primary alone never admits beyond the
// shared limit because of this one. A call the primary decides is its
// decision (its statuses, counted as the primary's), and so is a refusal
// its over-limit cache gives for it (see CachingStore), which leaves the
// breaker and the return period as they were; a call the share refuses
// is a fallback (ErrReturning) and still charges what it owes: the
// primary's health check. So does a call the share admits that has no
// check for the primary (concurrency checks only), a fallback too
// (errAdmittedByShare). A success closes a half-open breaker and starts
// the node's return period (see returning); a failure counts against the
// node, and the local decision stands, owed to the primary, a fallback. A
// caller that gives up gets an error, and what the share gave its call
// goes back (see giveBack).
func (f *Store) returnCall(parent context.Context, checks []sluice.Check, out []sluice.Status, ns []*node, tks []ticket, h hold) error {
	defer h.release()
	// The local decision, the charges and the primary's decision share one
	// bound: a call returns within it, decided by the share when the
	// primary has not answered by then.
	begun := time.Now()
	ctx, cancel := f.chargeBoundedFrom(parent, begun)
	defer cancel()
	if err := f.applyLocal(ctx, checks, out); err != nil {
		f.release(ns, tks)
		if cerr := parent.Err(); cerr != nil {
			return fmt.Errorf("failover: caller gave up: %w (%v)", cerr, ErrReturning)
		}
		return fmt.Errorf("failover: %w; local fallback: %w", ErrReturning, err)
	}
	var err error
	decided, cached := false, false // by the primary; by its cache
	if admitted(checks, out) {
		decided, cached, err = f.returnPrimary(ctx, checks, out, ns)
	}
	if err == nil && cached {
		// The primary's refusal, which its cache gave without asking it:
		// a decision, not a fallback, that says nothing of its health.
		f.release(ns, tks)
		return nil
	}
	if err == nil && !decided {
		err = f.settleOr(ctx, checks, ns, true)
	}
	reason, blamed := ErrReturning, ns
	switch {
	case err == nil:
		until := f.elapsed() + int64(f.returnFor)
		for j, n := range ns {
			if n.fellBack.Swap(false) || BreakerState(tks[j].word&3) == BreakerHalfOpen {
				n.returnUntil.Store(until)
			}
			n.breaker.Done(tks[j], true)
		}
		for _, k := range h.marks {
			if k.fellBack.Swap(false) {
				k.returnUntil.Store(until)
			}
		}
		if decided {
			return nil
		}
	case parent.Err() != nil:
		// The caller gave up: no decision, not a fallback, nothing owed.
		// What the share gave the call goes back to it. None of it is
		// charged to the primary: the charges sent meanwhile are of units
		// admitted before (the ledger's; this call's would only be added
		// by owe), and a primary.Apply of its checks cut short counts them,
		// if it ran, as the primary's own, as an Apply outside a return
		// period whose caller gives up does.
		f.release(ns, tks)
		f.giveBack(context.WithoutCancel(ctx), checks, out, false)
		return fmt.Errorf("failover: caller gave up: %w (%v)", parent.Err(), err)
	default:
		f.storeErrors.Add(1)
		blamed = blame(err, ns)
		for j, n := range ns {
			if len(blamed) == len(ns) || blamed[0] == n {
				n.storeErrors.Add(1)
				f.failed(n, tks[j], checks)
			} else {
				n.breaker.abandon(tks[j])
			}
		}
		reason = fmt.Errorf("%w: %w", ErrReturning, err)
	}
	if err != nil {
		// The primary may not have counted it.
		if err := f.owe(parent, checks, out, blamed, begun); err != nil {
			return fmt.Errorf("failover: caller gave up: %w (%v)", err, reason)
		}
	} else if admitted(checks, out) {
		reason = errAdmittedByShare
	}
	f.counted(blamed, reason)
	return nil
}

// returnPrimary has the primary decide the checks that out admits locally,
// after charging what their keys owe (callPrimary), and reports whether it
// did, and whether its over-limit cache answered for it (cached: a
// refusal that says nothing of the primary's health). Out becomes the
// primary's statuses (its receipts too: a refund goes back to the
// primary, which counted the units), or its refusal; what the local store
// gave a refused call goes back: its leases, and the units of its fixed
// window, sliding counter and sliding log checks (refunded by their
// receipts). A bucket's units stay spent in the share (a bucket takes no
// refund), which then admits less until it refills, never more.
// Concurrency checks are decided locally only (a lease the primary gave
// to a call the share then refused would be held until it expired).
func (f *Store) returnPrimary(ctx context.Context, checks []sluice.Check, out []sluice.Status, ns []*node) (decided, cached bool, err error) {
	var idx []int
	for i := range checks {
		if chargeable(checks[i].Limit) {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return false, false, nil
	}
	pc := make([]sluice.Check, len(idx))
	ps := make([]sluice.Status, len(idx))
	for j, i := range idx {
		pc[j] = checks[i]
	}
	var sent time.Time // orders the answer in the memo (see memo.put)
	if f.memo != nil {
		sent = f.now()
	}
	cached, err = f.callPrimary(ctx, pc, ps, ns, time.Time{})
	if err != nil {
		return false, false, err
	}
	if f.memo != nil && !cached {
		f.memo.put(pc, ps, nil, sent, f.now())
	}
	if admitted(pc, ps) {
		for j, i := range idx {
			out[i] = ps[j]
		}
		return true, cached, nil
	}
	// Refused: the primary's statuses, and what the share gave back (the
	// checks of its leases report as a peek would).
	f.giveBack(ctx, checks, out, false)
	for i := range checks {
		if out[i].Lease != 0 {
			out[i].Remaining = min(out[i].Remaining+checks[i].Cost, f.share(checks[i].Limit).Burst())
			out[i].Lease = 0
		}
	}
	for j, i := range idx {
		out[i] = ps[j]
	}
	return true, cached, nil
}

// giveBack gives the local store back what applyLocal gave checks and
// reported in out (its marked leases and receipts: see markLocal), for a
// call that is not admitted after all: the leases released, the units of
// fixed window, sliding counter and sliding log checks refunded, with the
// shares it decided. With owed, the units were put in the ledger's
// accounts (see owe) and are taken out of them as Refund takes them;
// otherwise nothing of them was owed to the primary and the ledger is not
// touched. A lease not given back expires; units not given back (a
// bucket's, which takes no refund) leave the share stricter until they
// pass, never looser, and are charged if owed.
func (f *Store) giveBack(ctx context.Context, checks []sluice.Check, out []sluice.Status, owed bool) {
	var leased []sluice.Check
	var leases, receipts []int64
	for i := range checks {
		if isLocal(out[i].Charged) {
			if receipts == nil {
				receipts = make([]int64, len(checks))
			}
			receipts[i] = out[i].Charged - localMark
		}
		if isLocal(out[i].Lease) {
			c := checks[i]
			c.Limit = f.share(c.Limit)
			leased, leases = append(leased, c), append(leases, out[i].Lease-localMark)
		}
	}
	if r, ok := f.local.(sluice.Releaser); ok && len(leased) > 0 {
		_ = r.Release(ctx, leased, leases)
	}
	switch {
	case receipts != nil && owed:
		_ = f.refundLocal(ctx, checks, receipts)
	case receipts != nil:
		_ = f.refundShares(ctx, checks, receipts)
	}
}

// A charge is units of an account's key and limit to charge under an id.
type charge struct {
	a     *account
	check sluice.Check // Cost: the units
	id    string
}

// owed plans the charges of the claimed accounts: for each, the units it
// owes, as far as the local state still counts them (units whose window
// has passed, or that a bucket has refilled since, no longer limit anyone
// and are not charged), the latest first: those admitted since its doubt,
// then its doubt's. A doubt none of whose units are held, or past its
// horizon (ChargeHorizon of elapsed time from when it was first sent),
// counts nowhere any more, and is over unsent. first holds each doubt sent
// again under its id and the new charges of the accounts without one,
// each under a new id; then the new charges of the accounts whose doubt is
// in first, to be sent once first has succeeded, so that an account never
// has more than one charge in doubt. Accounts that owe nothing are left
// out.
func (f *Store) owed(ctx context.Context, accounts []*account) (first, then []charge, err error) {
	peeks := make([]sluice.Check, len(accounts))
	st := make([]sluice.Status, len(accounts))
	for i, a := range accounts {
		peeks[i] = sluice.Check{Key: a.check.Key, Limit: f.share(a.check.Limit)}
	}
	for lo := 0; lo < len(peeks); lo += sluice.MaxChecks {
		hi := min(lo+sluice.MaxChecks, len(peeks))
		if err := f.local.Apply(ctx, peeks[lo:hi], st[lo:hi]); err != nil {
			return nil, nil, err
		}
	}
	now := f.elapsed()
	for i, a := range accounts {
		p := &a.plan
		doubt := p.doubt.units
		if doubt > 0 && now-p.doubt.since >= int64(ChargeHorizon(a.check.Limit)) {
			doubt, p.over = 0, true
		}
		// The units held are the latest admitted: the account's, then its
		// doubt's.
		held := max(peeks[i].Limit.Burst()-st[i].Remaining, 0)
		fresh := min(held, a.charged)
		if doubt > 0 {
			if p.resend = min(held-fresh, doubt); p.resend == 0 {
				p.over = true
			} else {
				first = append(first, charge{a, sluice.Check{Key: a.check.Key, Limit: a.check.Limit, Cost: p.resend}, p.doubt.id})
			}
		}
		if fresh > 0 {
			p.fresh = pending{id: newChargeID(), units: fresh, since: now}
			ch := charge{a, sluice.Check{Key: a.check.Key, Limit: a.check.Limit, Cost: fresh}, p.fresh.id}
			if p.later = p.resend > 0; p.later {
				then = append(then, ch)
			} else {
				first = append(first, ch)
			}
		}
	}
	return first, then, nil
}
