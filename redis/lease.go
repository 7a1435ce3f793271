package redis

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/leasehold"
)

// LeaseMode says whether a limit's quota is leased (see Leased).
type LeaseMode uint8

const (
	// LeaseOff, the zero value, decides every check of the limit on Redis.
	LeaseOff LeaseMode = iota
	// LeaseAuto leases the limit's quota when its algorithm can be leased
	// (fixed window, sliding counter, token bucket, GCRA, leaky-bucket
	// meter; see the package documentation, Leased quota) and decides it
	// per request otherwise.
	LeaseAuto
)

// String returns "off" or "auto".
func (m LeaseMode) String() string {
	if m == LeaseAuto {
		return "auto"
	}
	return "off"
}

// MaxLeaseKeys bounds the keys and limits a Leased keeps leases of at
// once; the checks of others are decided by the store behind, as without
// leases, until unused keys are forgotten (ten seconds after their last
// use, or ten LeaseOptions.MaxAge if shorter). A flood of keys cannot grow
// a Leased's memory past it.
const MaxLeaseKeys = 1 << 16

// Defaults of LeaseOptions.
const (
	DefaultLeaseMaxUnits = 1000
	DefaultLeaseMaxAge   = leasehold.DefaultMaxAge // a minute
	DefaultLeaseIdle     = 250 * time.Millisecond
)

// LeaseOptions configure the leased quota of Open's store (Options.Lease).
// The zero value leases nothing.
type LeaseOptions struct {
	// Mode is every limit's mode unless Limits names it: LeaseOff (the
	// zero value) or LeaseAuto.
	Mode LeaseMode
	// Limits sets the mode of the limits whose ID (sluice.Limit.ID) it
	// holds, overriding Mode.
	Limits map[string]LeaseMode
	// MaxUnits caps the units of one lease; DefaultLeaseMaxUnits (1,000)
	// when zero or less. It bounds what a crash can strand per key and
	// limit (see the package documentation).
	MaxUnits int64
	// MaxAge caps the life of a lease; DefaultLeaseMaxAge (1 minute) when
	// zero or less. A window's lease ends with its window in any case, so
	// at the default the leases of windows up to a minute (a per-second or
	// per-minute plan) live to their window's end. A bucket's lease lives
	// the time a quarter of its burst takes to refill, at most MaxAge, and
	// its shared burst holds back what refills in that life: a smaller
	// MaxAge holds back less of a large burst, at the cost of more takes.
	// A shared remainder heard longer than MaxAge ago is not used to size
	// a take.
	MaxAge time.Duration
	// Idle is how long a lease may go unused before its units go back
	// early, when they could matter to other instances: when the shared
	// remainder as last heard is scarce (a take's size no longer bounds
	// takes, the remainder's share does), or when a lease of its size on
	// every instance would hold more than 1% of the limit's burst.
	// Otherwise an unused lease keeps its units until it ends (its window,
	// its life), at a cost of at most 1% of the limit per key. Idle is
	// DefaultLeaseIdle (250 ms) when zero or less.
	Idle time.Duration
}

// enabled reports whether o leases any limit.
func (o LeaseOptions) enabled() bool {
	if o.Mode == LeaseAuto {
		return true
	}
	for _, m := range o.Limits {
		if m == LeaseAuto {
			return true
		}
	}
	return false
}

// modeOf returns the mode of the limit with ID id.
func (o LeaseOptions) modeOf(id string) LeaseMode {
	if m, ok := o.Limits[id]; ok {
		return m
	}
	return o.Mode
}

// leaseBackend is the shared state leases are taken from and given back
// to: a Store, or Open's store once it has connected.
type leaseBackend interface {
	// applyAt is Store.Apply that also tells the shared state's time of
	// each check's decision, µs since sluice.Epoch, in ats[i]: on a
	// Cluster, the time of the master of its key's slot, whose state
	// counted it (the masters' clocks and runs differ).
	applyAt(ctx context.Context, checks []sluice.Check, out []sluice.Status, ats []int64) error
	// take runs lease_take.lua: checks (their keys in one slot) decided
	// at their cost, all-or-nothing, and when all are admitted up to
	// want[i] units more of check i, as fit, reported in got[i]; it
	// returns the shared state's time, or errTakeSlots when the keys lie
	// in several Cluster slots.
	take(ctx context.Context, checks []sluice.Check, want []int64, out []sluice.Status, got []int64) (int64, error)
	// giveBack runs lease.lua: for each check, Cost units of the take
	// sent at the shared state's time ats[i], whose undo mark is marks[i],
	// go back, unless the state was reset since (Store.Reset). It returns
	// the units that were not given back for that reason.
	giveBack(ctx context.Context, checks []sluice.Check, marks []string, ats []int64) (int64, error)
}

// Leased is a sluice.Store that decides most checks of leased limits in
// memory, from quota leased from Redis, and the rest through the store
// behind it. Open returns it inside its Guarded when Options.Lease leases
// any limit.
//
// A lease is units of one key's limit that an apply.lua run admitted at
// once, together with the check that asked for them or alone: the shared
// state has counted them as admitted at that moment (g), so that an
// instance may admit up to that many units without asking, until the
// lease ends. A lease ends with the window it was taken in (fixed window,
// sliding counter), or L after its take for a bucket, whose shared burst
// holds back what refills in L, and at the latest LeaseOptions.MaxAge
// after its take. The package documentation, Leased quota, derives why the
// fleet then never admits more than the shared state would have.
//
// A call is decided in memory when every check of it has a lease with the units
// it needs; otherwise its uncovered checks take leases in one script run, and
// the covered ones are held aside until that run answers: a refusal there
// spends nothing of any lease. The run asks each check's cost and lease's units
// together, all-or-nothing, in an apply.lua run batched with other calls; near
// exhaustion (the shared remainder as last heard bounds a take, see below) it
// is lease_take.lua, which decides the costs alone all-or-nothing and adds to
// each as many lease units as are left, so that its refusal is the call's own.
// A call with a check that is not leased, a call whose shared remainder is
// stale or too low to lease from, a take the shared state cannot answer, and a
// take refused when asking cost and lease together, are decided by the store
// behind, check by check exactly as without leases (a bucket's by its shared
// limit). One take runs at a time per key and limit: a call that needs one
// while another runs waits for it and looks again. A call with a check of a
// leased bucket whose cost is above the bucket's shared burst
// (leasehold.Of), which the shared state never admits, is
// decided by the store behind at once: that check refused with RetryAfter
// sluice.Never and nothing consumed, as a cost above a burst is.
//
// A key's next lease is taken before its current one runs out: when a check
// leaves the current lease with a quarter of its units or of its life, and no
// next lease is held, a take of the lease alone starts in the background while
// calls keep spending the current one; the next is spent once the current one
// cannot cover a check. So a call waits for Redis only when its key has no
// lease that covers it: a key's first call (it takes a lease, sized as if the
// shared remainder were the limit's burst, which it is at most), a key whose
// lease ended before its next call, a cost above what is left, or a shared
// remainder too low to lease. A take at low water asks for what the instance
// spends of the key in a lease's life, at the rate it spent the current lease,
// less what it still holds; a take after a lease ran out asks for twice that
// lease when it was spent within half its life, and after one ended unspent,
// for what was spent of it. Every take is capped by LeaseOptions.MaxUnits —
// what an instance holds of one key's limit, current and next lease together,
// never exceeds it — and by the shared remainder as last heard divided among
// twice the instances, so that takes shrink to nothing (the exact per-request
// path) as the remainder runs out.
//
// Unspent units go back to Redis (lease.lua, one script run per batch of
// at most 256 keys, batches one after another) when a lease has been idle (see LeaseOptions.Idle), ends, or is
// replaced, and on Return and Close — except when the shared limit was, as
// last heard, full again by then, when giving them back would change
// nothing there. When Open's store sees that Redis lost what it counted (a
// master back without its data, writes lost in a failover, as far as the
// watch sees them: Losses), every lease held ends at once, neither spent
// nor given back (LeaseStats.Lost).
//
// A Leased is safe for concurrent use by any number of goroutines. The zero
// Leased has no store behind it: its Apply returns an error wrapping
// sluice.ErrStoreUnavailable, and Return and Close do nothing. Make one with
// NewLeased or Open.
type Leased struct {
	next   sluice.Store
	shared leaseBackend
	opts   LeaseOptions
	share  int64 // 2 × the instances: a take is at most remainder/share
	clock  func() int64
	after  int64 // µs a take is not tried after one failed
	// direct, when next can tell (failover.Store.Direct), reports whether
	// Redis alone may decide checks now; a take is Redis deciding alone,
	// so while it is false the checks go to next, which charges what its
	// fallback admitted first.
	direct func([]sluice.Check) bool
	// heard, when next can take it (failover.Store.Heard), is told what
	// Redis answered a take and when Redis decided it, so that a fallback
	// on the key starts from what the take left, not from a whole share,
	// nor from what a take decided before a later answer left.
	heard func([]sluice.Check, []sluice.Status, []int64)
	// returned, when not nil, is told the key of every unit given back
	// (see giveBack): capacity that comes back to Redis other than with
	// time, which an over-limit cache in front of Redis must not go on
	// refusing (overlimit.Cache.Invalidate).
	returned func(key string)

	mu      sync.RWMutex
	entries map[leaseKey]*leaseEntry
	seq     uint64 // entries made, for their lock order

	pendingMu sync.Mutex
	pending   []sluice.Check // units to give back, with their takes' marks and times
	marks     []string
	ats       []int64
	// epoch counts the losses of the shared state (see drop); written with
	// pendingMu held. A lease is spent and given back only in the epoch
	// its take was sent in.
	epoch atomic.Uint64

	down  atomic.Int64 // local µs until which takes are not tried
	stats leaseCounters

	refillMu sync.Mutex
	closing  bool           // Close has begun: no more takes start
	shut     atomic.Bool    // Close has begun: no more takes, calls go to next
	refills  sync.WaitGroup // takes running, background ones and calls'

	stop   chan struct{}
	done   chan struct{}
	closed sync.Once
}

type leaseKey struct{ key, id string }

// NewLeased returns a Leased that takes leases from shared and decides
// every call it cannot decide from leases with next, which must keep its
// state in the same Redis (the Store itself, or a failover around it). A
// failover.Store as next is asked (Direct) before every take: while it
// falls back, returns, or owes Redis what it admitted locally on a key,
// the key's checks go to it rather than to a take; and it is told what
// each take left (Heard), which its fallback starts from.
// instances is how many processes lease from that Redis (values below 1
// mean 1). Leases expire by shared's clock (WithTimeForTesting's, else the
// process's monotonic clock). Close gives back what it holds and stops its
// background work; it does not close next or shared. A nil next or shared
// makes a Leased with no store, as the zero Leased. Units given back are
// capacity coming back other than with time, of which an overlimit.Cache in
// next is not told: it may refuse what Redis then admits for up to its
// MaxAge (Open's store tells its own cache).
func NewLeased(next sluice.Store, shared *Store, instances int, opts LeaseOptions) *Leased {
	if next == nil || shared == nil {
		return &Leased{}
	}
	return newLeased(next, shared, shared.now, instances, opts)
}

func newLeased(next sluice.Store, shared leaseBackend, now func() time.Time, instances int, opts LeaseOptions) *Leased {
	return newLeasedTelling(next, shared, now, instances, opts, nil)
}

// newLeasedTelling is newLeased whose give-backs tell returned, when not
// nil, the key of every unit they give back (see Leased.giveBack).
func newLeasedTelling(next sluice.Store, shared leaseBackend, now func() time.Time, instances int, opts LeaseOptions,
	returned func(key string)) *Leased {
	if opts.MaxUnits <= 0 {
		opts.MaxUnits = DefaultLeaseMaxUnits
	}
	if opts.MaxAge <= 0 {
		opts.MaxAge = DefaultLeaseMaxAge
	}
	if opts.Idle <= 0 {
		opts.Idle = DefaultLeaseIdle
	}
	l := &Leased{
		next: next, shared: shared, opts: opts, share: 2 * int64(max(instances, 1)),
		after:    int64(500 * time.Millisecond / time.Microsecond),
		returned: returned,
		entries:  make(map[leaseKey]*leaseEntry),
		stop:     make(chan struct{}), done: make(chan struct{}),
	}
	if d, ok := next.(interface{ Direct([]sluice.Check) bool }); ok {
		l.direct = d.Direct
	}
	if h, ok := next.(interface {
		Heard([]sluice.Check, []sluice.Status, []int64)
	}); ok {
		l.heard = h.Heard
	}
	if now != nil {
		l.clock = func() int64 { return sluice.MicrosSinceEpoch(now()) }
	} else {
		start := time.Now()
		l.clock = func() int64 { return int64(time.Since(start) / time.Microsecond) }
	}
	go l.sweep()
	return l
}

// entry returns the entry of c's key and limit, made if new, or nil when
// c is not leased.
func (l *Leased) entry(c *sluice.Check) *leaseEntry {
	k := leaseKey{c.Key, c.Limit.ID()}
	if c.Cost <= 0 { // a peek is decided by the store behind
		return nil
	}
	l.mu.RLock()
	e := l.entries[k]
	l.mu.RUnlock()
	if e != nil && e.limit == c.Limit {
		return e.leased()
	}
	if l.opts.modeOf(k.id) != LeaseAuto {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if e = l.entries[k]; e != nil && e.limit == c.Limit {
		return e.leased()
	}
	if e != nil { // the limit changed: its lease goes back
		e.mu.Lock()
		l.retire(e, false)
		e.dead = true
		e.mu.Unlock()
		delete(l.entries, k)
	}
	plan, ok := planLease(c.Limit, l.opts.MaxAge)
	if !ok || len(l.entries) >= MaxLeaseKeys {
		return nil
	}
	l.seq++
	e = &leaseEntry{key: c.Key, limit: c.Limit, plan: plan, ok: ok, id: l.seq, shared: -1, size: 8, resetAt: math.MinInt64}
	l.entries[k] = e
	return e.leased()
}

// Apply implements sluice.Store (see Leased). Its errors are next's, or
// the caller's context's while it waits for another call's take.
func (l *Leased) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	if l.next == nil {
		return errNoStore()
	}
	if len(out) < len(checks) {
		return fmt.Errorf("redis store: %w: %d statuses for %d checks", sluice.ErrInvalidCheck, len(out), len(checks))
	}
	l.stats.calls.Add(1)
	if l.shut.Load() { // a lease taken now would never go back
		return l.exact(ctx, checks, out)
	}
	var buf [4]*leaseEntry
	es := buf[:0]
	for i := range checks {
		e := l.entry(&checks[i])
		if e == nil || contains(es, e) || e.beyond(checks[i].Cost) { // not leased, twice in the call, or never admitted
			return l.exact(ctx, checks, out)
		}
		es = append(es, e)
	}
	for {
		again, err := l.tryLeases(ctx, checks, es, out)
		if !again {
			return err
		}
	}
}

func contains(es []*leaseEntry, e *leaseEntry) bool {
	for _, x := range es {
		if x == e {
			return true
		}
	}
	return false
}

// ParseLeaseMode returns the mode named "auto" or "off" (as in a
// configuration's lease:); "" is LeaseOff.
func ParseLeaseMode(s string) (LeaseMode, error) {
	switch s {
	case "auto":
		return LeaseAuto, nil
	case "off", "":
		return LeaseOff, nil
	}
	return LeaseOff, fmt.Errorf("redis: unknown lease mode %q (use auto or off)", s)
}
