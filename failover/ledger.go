package failover

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/sluice-dev/sluice"
)

// DefaultLedger is how many keys decided locally a Store keeps account of at
// most, until it has charged them to the primary, unless Options.Ledger
// says otherwise.
const DefaultLedger = 1 << 16

// settleExtra is how many keys of other calls a call to the primary charges
// along with its own, so that keys no longer asked are charged too; it
// looks at settleLook accounts at most to find them.
const (
	settleExtra = 4
	settleLook  = 32
)

// An account is what a Store admitted locally on one key and limit since
// its fallback began there and has not charged to the primary yet.
type account struct {
	check    sluice.Check // the key and the shared limit; Cost unused
	admitted int64        // units admitted locally, not yet charged
	// busy is not nil while a call charges the account, and closed when it
	// is done; charged is what that call set out to settle.
	busy    chan struct{}
	charged int64
}

// A ledger keeps an account per key decided locally, bounded by max: a key
// that finds the ledger full is decided locally all the same, and its units
// are counted in uncharged.
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

// open starts an account for c unless one is open, and reports whether it
// started one: the first local decision on the key since its last charge.
func (lg *ledger) open(c *sluice.Check) bool {
	k := stateKey{c.Key, c.Limit.ID()}
	lg.mu.Lock()
	defer lg.mu.Unlock()
	if _, ok := lg.m[k]; ok || len(lg.m) >= lg.max {
		return false
	}
	lg.m[k] = &account{check: sluice.Check{Key: c.Key, Limit: c.Limit}}
	lg.size.Add(1)
	return true
}

// add records that the checks whose statuses are out were admitted locally.
// A key without an account gets one while the ledger has room: the account
// its decision opened (see open) may have been charged and closed by
// another call since, before this decision's units were in it.
func (lg *ledger) add(checks []sluice.Check, out []sluice.Status) {
	lg.mu.Lock()
	defer lg.mu.Unlock()
	for i := range checks {
		c := &checks[i]
		if !out[i].Allowed || c.Cost == 0 || !chargeable(c.Limit) {
			continue
		}
		k := stateKey{c.Key, c.Limit.ID()}
		a := lg.m[k]
		if a == nil && len(lg.m) < lg.max {
			a = &account{check: sluice.Check{Key: c.Key, Limit: c.Limit}}
			lg.m[k] = a
			lg.size.Add(1)
		}
		if a != nil && a.check.Limit == c.Limit {
			a.admitted += c.Cost
		} else {
			lg.uncharged.Add(c.Cost)
		}
	}
}

// take claims the open accounts of checks, waiting for those another call
// is charging, and up to settleExtra accounts of other keys for which also
// reports true. It returns the claimed accounts, each with charged set to
// what it holds now; the caller ends the claim with done.
func (lg *ledger) take(ctx context.Context, checks []sluice.Check, also func(*account) bool) ([]*account, error) {
	var taken []*account
	lg.mu.Lock()
	for i := 0; i < len(checks); i++ {
		a := lg.m[stateKey{checks[i].Key, checks[i].Limit.ID()}]
		if a == nil {
			continue
		}
		if a.busy != nil {
			busy := a.busy
			lg.mu.Unlock()
			select {
			case <-busy:
			case <-ctx.Done():
				lg.done(taken, false)
				return nil, ctx.Err()
			}
			lg.mu.Lock()
			i-- // look again: it may be settled, or still open
			continue
		}
		taken = append(taken, lg.claim(a))
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
	return a
}

// done ends the claim on taken: when settled, what each account held at
// take is charged and the account closes unless more was admitted since.
func (lg *ledger) done(taken []*account, settled bool) {
	lg.mu.Lock()
	defer lg.mu.Unlock()
	for _, a := range taken {
		if settled {
			a.admitted -= a.charged
			if a.admitted <= 0 {
				delete(lg.m, stateKey{a.check.Key, a.check.Limit.ID()})
				lg.size.Add(-1)
			}
		}
		close(a.busy)
		a.busy, a.charged = nil, 0
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
