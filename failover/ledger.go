package failover

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/sluice-dev/sluice"
)

// DefaultLedger is how many keys with units admitted locally a Store keeps
// account of at most, until it has charged them to the primary, unless
// Options.Ledger says otherwise.
const DefaultLedger = 1 << 16

// settleExtra is how many keys of other calls a call to the primary charges
// along with its own, so that keys no longer asked are charged too; it
// looks at settleLook accounts at most to find them.
const (
	settleExtra = 4
	settleLook  = 32
)

// An account is what a Store admitted locally on one key and limit ID and
// has not charged to the primary yet. It opens with the first units
// admitted and closes when they are all charged (or refunded).
type account struct {
	// check is the key and the shared limit, the limit of the latest
	// decision: a limit changed under the same ID (a reload) keeps the
	// account, and its units are charged under the limit in force; Cost
	// unused.
	check    sluice.Check
	admitted int64 // units admitted locally, in no charge sent yet
	// from is the earliest local receipt (Status.Charged, unmarked) of the
	// decisions whose units are in admitted and not claimed by a call; 0
	// when none has one. A refund of an earlier receipt is of units already
	// claimed or charged, and takes nothing from admitted (see refund).
	from int64
	// doubt is a charge whose call failed: the primary may have taken its
	// units or not. It is sent again under its id, which the primary takes
	// once, until a call succeeds or its units count nowhere any more.
	doubt pending
	// busy is not nil while a call charges the account, and closed when it
	// is done; charged is what of admitted that call set out to settle, and
	// plan what it does with the account.
	busy    chan struct{}
	charged int64
	plan    plan
	// next is the limit of a decision added while a call charged the
	// account, which check takes when the call is done (check is that
	// call's meanwhile); zero when none.
	next sluice.Limit
}

// A plan is what one call does with an account it claimed (see
// Store.owed), and what came of it.
type plan struct {
	doubt pending // the account's doubt as claimed
	from  int64   // the account's from as claimed
	// resend is the doubt's units sent again; with over, the doubt ends
	// unsent: past its horizon, or none of it still held locally.
	resend int64
	over   bool
	fresh  pending // the charge of charged; units 0: nothing owed
	later  bool    // fresh is sent once the doubt's resend has succeeded
	// outcome of the round of the resend (first) and of fresh (first, or
	// second when later).
	first, second outcome
}

// An outcome is what became of one round of charges.
type outcome uint8

const (
	unsent    outcome = iota
	succeeded         // the primary answered: each id's units taken once
	failed            // the call failed: each id's units in doubt
)

// round returns the outcome of fresh's round.
func (p *plan) round() outcome {
	if p.later {
		return p.second
	}
	return p.first
}

// A ledger keeps an account per key that admitted units locally, bounded by
// max: a key that finds the ledger full is decided locally all the same,
// and its units are counted in uncharged. A key whose local decisions
// admitted nothing (peeks, refusals) takes no room, so refused calls
// cannot crowd out the units of others.
type ledger struct {
	max       int
	size      atomic.Int64 // len(m), read without the lock
	uncharged atomic.Int64

	mu sync.Mutex
	m  map[stateKey]*account
}

func newLedger(max int) *ledger {
	if max <= 0 {
		max = DefaultLedger
	}
	return &ledger{max: max, m: make(map[stateKey]*account)}
}

// chargeable reports whether a limit's local admissions can be charged to
// the primary afterwards: every rate algorithm can; concurrency leases
// cannot (a lease taken locally is given back to the local store, and one
// charged to the primary could not be given back before it expires).
func chargeable(l sluice.Limit) bool { return l.Algorithm() != sluice.AlgorithmConcurrency }

// owedOn returns the units admitted locally on c's key and limit ID (under
// any limit of that ID) and not known to be charged (not charged yet, or
// in a charge in doubt), when an account for them is open and no call is
// charging it; ok is false otherwise.
func (lg *ledger) owedOn(c *sluice.Check) (units int64, ok bool) {
	if lg.size.Load() == 0 {
		return 0, false
	}
	k := stateKey{c.Key, c.Limit.ID()}
	lg.mu.Lock()
	defer lg.mu.Unlock()
	a := lg.m[k]
	if a == nil || a.busy != nil {
		return 0, false
	}
	return a.admitted + a.doubt.units, true
}

// add records that the checks whose statuses are out were admitted locally,
// each in its key's account (see account); the units of a key that finds
// the ledger full are counted in uncharged.
func (lg *ledger) add(checks []sluice.Check, out []sluice.Status) {
	lg.mu.Lock()
	defer lg.mu.Unlock()
	for i := range checks {
		c := &checks[i]
		if !out[i].Allowed || c.Cost == 0 || !chargeable(c.Limit) {
			continue
		}
		a := lg.account(c)
		if a == nil {
			lg.uncharged.Add(c.Cost)
			continue
		}
		a.admitted += c.Cost
		if r := out[i].Charged; isLocal(r) {
			a.from = earliest(a.from, r-localMark)
		}
	}
}

// account returns the account of c's key and limit ID, opened if none is
// and the ledger has room (nil if it has none), its limit c's: a limit
// changed under the same ID (a reload) keeps the units admitted under the
// old one, charged under the new one, which is safe since a charge takes
// at most what the local state holds under the limit it is sent with. A
// call charging the account keeps its limit until it is done. lg.mu is
// held.
func (lg *ledger) account(c *sluice.Check) *account {
	k := stateKey{c.Key, c.Limit.ID()}
	a := lg.m[k]
	switch {
	case a == nil && len(lg.m) >= lg.max:
		return nil
	case a == nil:
		a = &account{check: sluice.Check{Key: c.Key, Limit: c.Limit}}
		lg.m[k] = a
		lg.size.Add(1)
	case a.busy != nil: // the charging call reads a.check without lg.mu
		a.next = c.Limit
	case a.check.Limit != c.Limit:
		a.check.Limit = c.Limit
	}
	return a
}

// take claims the open accounts of checks, waiting for those another call
// is charging, and up to settleExtra accounts of other keys for which also
// reports true. It returns the claimed accounts, each with charged set to
// what it holds now; the caller ends the claim with done.
//
// The accounts of checks are claimed together, once no other call is
// charging any of them: a call that waited holding some could wait for a
// call waiting for those (checks [X, Y] and [Y, X]).
func (lg *ledger) take(ctx context.Context, checks []sluice.Check, also func(*account) bool) ([]*account, error) {
	lg.mu.Lock()
	for busy := lg.busyOf(checks); busy != nil; busy = lg.busyOf(checks) {
		lg.mu.Unlock()
		select {
		case <-busy:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		lg.mu.Lock()
	}
	var taken []*account
	for i := range checks {
		// Busy now only if claimed for an earlier check of this call.
		if a := lg.m[stateKey{checks[i].Key, checks[i].Limit.ID()}]; a != nil && a.busy == nil {
			taken = append(taken, lg.claim(a))
		}
	}
	// Go visits a map from a random place: looking at a few accounts per
	// call reaches them all over the calls, at a bounded cost each.
	extra, looked := 0, 0
	for _, a := range lg.m {
		if extra == settleExtra || looked == settleLook {
			break
		}
		looked++
		if a.busy == nil && also(a) {
			taken = append(taken, lg.claim(a))
			extra++
		}
	}
	lg.mu.Unlock()
	return taken, nil
}

// busyOf returns what closes when the call charging an account of checks
// is done, or nil when no call charges any. lg.mu is held.
func (lg *ledger) busyOf(checks []sluice.Check) chan struct{} {
	for i := range checks {
		if a := lg.m[stateKey{checks[i].Key, checks[i].Limit.ID()}]; a != nil && a.busy != nil {
			return a.busy
		}
	}
	return nil
}

// takeAny claims up to n accounts no call is charging, each with charged
// set to what it holds now; the caller ends the claim with done.
func (lg *ledger) takeAny(n int) []*account {
	lg.mu.Lock()
	defer lg.mu.Unlock()
	var taken []*account
	for _, a := range lg.m {
		if len(taken) == n {
			break
		}
		if a.busy == nil {
			taken = append(taken, lg.claim(a))
		}
	}
	return taken
}

// claim marks a as being charged. lg.mu is held.
func (lg *ledger) claim(a *account) *account {
	a.busy, a.charged = make(chan struct{}), a.admitted
	a.plan = plan{doubt: a.doubt, from: a.from}
	a.from = 0
	return a
}

// earliest returns the earlier of receipts r and s, 0 meaning none.
func earliest(r, s int64) int64 {
	if r == 0 || s != 0 && s < r {
		return s
	}
	return r
}

// done ends the claim on taken, each account as its plan came out, settled
// when the whole call succeeded. A doubt ends when its resend succeeded or
// it was over. The units of charged are gone from admitted once their
// charge was sent, or settled with nothing owed: taken when it succeeded,
// in doubt under their id when it failed. An account closes when it holds
// no units and no doubt; one that stays open takes the limit of a decision
// added during the claim (see account).
func (lg *ledger) done(taken []*account, settled bool) {
	lg.mu.Lock()
	defer lg.mu.Unlock()
	for _, a := range taken {
		p := &a.plan
		if p.over || p.resend > 0 && p.first == succeeded {
			a.doubt = pending{}
		}
		switch {
		case p.fresh.units > 0 && p.round() == succeeded:
			a.admitted -= a.charged
		case p.fresh.units > 0 && p.round() == failed:
			a.admitted -= a.charged
			a.doubt = p.fresh
		case p.fresh.units == 0 && settled:
			a.admitted -= a.charged
		default: // the claimed units are unclaimed again
			a.from = earliest(a.from, p.from)
		}
		if a.admitted <= 0 && a.doubt.units == 0 {
			delete(lg.m, stateKey{a.check.Key, a.check.Limit.ID()})
			lg.size.Add(-1)
		}
		if a.next != (sluice.Limit{}) {
			a.check.Limit, a.next = a.next, sluice.Limit{}
		}
		close(a.busy)
		a.busy, a.charged, a.plan = nil, 0, plan{}
	}
}

// owes reports whether an open account's key is on the node called name.
func (lg *ledger) owes(name string, nodeOf func(*sluice.Check) string) bool {
	lg.mu.Lock()
	defer lg.mu.Unlock()
	for _, a := range lg.m {
		if nodeOf == nil || nodeOf(&a.check) == name {
			return true
		}
	}
	return false
}
