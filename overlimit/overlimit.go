package overlimit

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/algo"
)

// DefaultMaxEntries is how many denials a Cache remembers at most unless
// Options.MaxEntries says otherwise.
const DefaultMaxEntries = 1 << 16

// DefaultMaxAge is how long a Cache remembers a denial at most unless
// Options.MaxAge says otherwise.
const DefaultMaxAge = time.Second

// Options configures a Cache. The zero value means the defaults.
type Options struct {
	// MaxEntries bounds the denials remembered, with the checks that fitted
	// beside them, DefaultMaxEntries (65,536) when ≤ 0. A denial holds a copy of its key and of its limit, about
	// 300 bytes beside the key: some 25 MB at the default bound for keys
	// of 80 bytes, up to some 90 MB for keys of sluice.MaxKeyLen. A full
	// cache first forgets expired denials, then what it keeps only to
	// state beside a refusal, then the denials that expire soonest
	// (Stats.Evictions counts those two): forgetting is always safe, it
	// only costs round trips and figures. Each call the store answers also
	// forgets the expired denials of a few keys, a shard in turn, so that
	// what a flood left is given back as the calls after it go on.
	MaxEntries int
	// MaxAge bounds how long a denial is remembered, DefaultMaxAge (1 s)
	// when ≤ 0: capacity that comes back on another instance sharing the
	// store (its refund, an operator's reset through it) reaches no call of
	// this cache, which then refuses what the store admits for at most
	// MaxAge. A client refused for longer costs the store one call per
	// MaxAge.
	MaxAge time.Duration
	// Clock returns the current time; time.Now when nil. Only its
	// differences matter (monotonic readings), never its agreement with the
	// store's clock.
	Clock func() time.Time
}

// Stats counts what a Cache has done since it was made.
type Stats struct {
	// RoundTripsSaved counts calls refused without asking the store.
	RoundTripsSaved int64
	// Entries is the number of denials remembered now, with the checks
	// that fitted beside them, expired ones that have not been swept yet
	// included.
	Entries int
	// Evictions counts live denials forgotten to make room, with the
	// figures kept beside them.
	Evictions int64
}

// A Cache is a sluice.Store in front of another (a remote one, typically
// Redis) that remembers denials, so that a client that keeps knocking after
// it was refused is refused again in-process, without a round trip. It is
// what keeps the store calm under a flood from one abusive client.
//
// When the store refuses an enforcing check of cost c with a RetryAfter R
// other than Never, the cache remembers, for the check's key and limit:
// cost ≥ c is refused until R after this call was sent, or Options.MaxAge
// after it if that is sooner. Until then, a call
// that carries an enforcing check of that key and limit (same name and
// parameters) with a cost ≥ c is refused without asking the store.
//
// This is exact: the cache never refuses what the store would admit. R is
// the shortest wait after which the store admits c, and nothing but time
// gives capacity back — other admissions only take more, and a larger cost
// needs more. The wait is measured from when the refused call was sent, not
// from when its answer came back: the store decided somewhere in between, so
// a later call that takes as long to reach the store reaches it no earlier
// than the store's own deadline. The cache also stops refusing 1 µs early
// (the store's clock counts whole microseconds, on a grid of its own) and
// R/1024 early (any difference between the two clocks' rates, far beyond
// the 500 ppm NTP allows). What a refusal states is counted the other way,
// from when the answer came back, so that a client that waits the
// RetryAfter it is told reaches the store no earlier than its deadline
// either: it is late by at most the round trip's time.
//
// Calls always go to the store when they carry a peek (cost 0: it asks for
// state only the store has) or when none of their enforcing checks has a
// live denial at or below its cost. Shadow limits never refuse: a shadow
// limit's refusal is remembered only beside an enforcing one, to be stated
// with it (Allowed false, its figures counted as a denial's), as the store
// states it. Costs above Burst (RetryAfter Never, refused by the store
// without touching state) and concurrency limits
// (sluice.AlgorithmConcurrency: a unit comes back when the work holding it
// ends, on whichever instance releases it, not with time) are never
// remembered, nor is a refusal for want of room (sluice.Status.NoRoom: a
// memory store full of states it may not evict), which counted nothing
// and says nothing of the key's use: room comes back when any other key's
// state stops refusing or is reset, not with the key's own time. Every answer of the store updates what is
// remembered: a denial replaces the one remembered for its key and limit
// name; an answer that contradicts a remembered denial (the check fits at a
// cost said to be refused, or states Remaining at least that cost, as a
// peek may after capacity came back elsewhere), that admits a smaller cost (which takes
// capacity, so the remembered wait is too short), or that is for the same
// name with other parameters (the configuration changed), drops it.
//
// A call the cache refuses is refused as a whole, so nothing is consumed,
// as the store would do. Each check with a live denial is refused with
// Remaining what the store said it held (never less: capacity only comes
// back with time), refilled since at Quantity per Window for a bucket
// (token, leaky, GCRA), and always below the cost refused, RetryAfter
// the time left until the store's deadline rounded up to a microsecond
// (exact for the cost refused; for a larger one, at most 1 µs early for a
// bucket, which needs the difference to refill, exact for a fixed window,
// a lower bound for a sliding log or counter; Never for a cost above
// Burst) and ResetAfter what the store said less the time since.
// A check whose cost exceeds its Burst is refused with RetryAfter Never, as
// the store refuses it whatever its state. A check that fitted beside a
// refusal the store gave (a per-day quota beside a per-second limit that
// refused) is remembered with the refusal, and reported Allowed with the
// figures the store gave of it, counted as the remembered check's
// Remaining and ResetAfter are, as long as they cover its cost. Such a
// check whose figures do not cover its cost, and the checks the cache
// knows nothing of, were not evaluated: they are reported
// sluice.Status.Undecided, Allowed (as far as anyone knows they did not
// refuse the call) with Remaining and ResetAfter 0, which measure nothing.
// So Decision.Violated names only the remembered limits and those of a
// cost above Burst, and the Decision's limit and numbers are one of
// theirs.
//
// Capacity that comes back other than with time must be reported: call
// Invalidate(key) after a refund, and Reset after a configuration change.
// Calls already on their way to the store then do not remember their
// denials. An error from the store other than a timeout, the caller's, or
// an invalid check also resets the cache: a refused connection may be a
// restart that lost every state. The cache cannot see a store that loses its
// state with no error in between, capacity that comes back through another
// instance (its refund, an operator's reset there), nor other instances
// writing a key under other parameters of its limit (a rolling configuration
// change): then it may refuse what the store would admit, for at most the
// remembered wait, which is at most Options.MaxAge.
//
// Put it inside a failover.Store, directly around the remote store, so that
// it only ever remembers the remote store's answers (see failover.Store).
// Memory is bounded by MaxEntries. A Cache is safe for concurrent use when
// its store is.
type Cache struct {
	next     sluice.Store
	clock    func() time.Time
	base     time.Time // times are ns since base: monotonic, small
	seed     maphash.Seed
	shards   []shard
	mask     uint64
	perShard int
	maxAge   int64 // ns

	saved     atomic.Int64
	evictions atomic.Int64
	sweeps    atomic.Uint64 // the calls that swept a shard, in turn
}

type shard struct {
	mu    sync.Mutex
	keys  map[string]*denials
	n     int    // denials held
	epoch uint64 // grows on every Invalidate and Reset that touch the shard
}

// denials lists the remembered denials of one key, one per limit name.
type denials struct{ list []denial }

// denial is one remembered refusal: cost ≥ cost of limit is refused before
// until. One of a shadow limit refuses nothing: it is stated beside an
// enforcing one. One of cost 0 refuses nothing either: it keeps, until then,
// the figures the store gave of a check that fitted beside a refusal. Times
// are ns since the cache's base.
type denial struct {
	limit     sluice.Limit
	cost      int64
	remaining int64 // the units the store said the limit held
	until     int64 // refuse before this: the store's deadline less the margins
	retryAt   int64 // the store's deadline (at the latest), for RetryAfter
	resetAt   int64 // when the store said the limit would be full again (at the latest)
}

// New returns a Cache in front of next, configured by opts. With a nil next
// every call fails with sluice.ErrStoreUnavailable.
func New(next sluice.Store, opts Options) *Cache {
	maxEntries := opts.MaxEntries
	if maxEntries <= 0 {
		maxEntries = DefaultMaxEntries
	}
	n := 64
	for n > 1 && maxEntries/n < 16 {
		n /= 2
	}
	c := &Cache{
		next:     next,
		clock:    opts.Clock,
		seed:     maphash.MakeSeed(),
		shards:   make([]shard, n),
		mask:     uint64(n - 1),
		perShard: maxEntries / n, // rounded down: together never above MaxEntries
		maxAge:   int64(opts.MaxAge),
	}
	if c.maxAge <= 0 {
		c.maxAge = int64(DefaultMaxAge)
	}
	if c.clock == nil {
		c.clock = time.Now
	}
	c.base = c.clock()
	for i := range c.shards {
		c.shards[i].keys = make(map[string]*denials)
	}
	return c
}

// Stats returns the current counts.
func (c *Cache) Stats() Stats {
	st := Stats{RoundTripsSaved: c.saved.Load(), Evictions: c.evictions.Load()}
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		st.Entries += sh.n
		sh.mu.Unlock()
	}
	return st
}

// Invalidate forgets every denial remembered for key, under every limit, and
// keeps calls for key already on their way to the store from remembering
// theirs. Call it when key gets capacity back other than with time: a refund.
// On the zero Cache, which remembers nothing, it does nothing.
func (c *Cache) Invalidate(key string) {
	if len(c.shards) == 0 {
		return
	}
	sh := c.shard(key)
	sh.mu.Lock()
	if ds := sh.keys[key]; ds != nil {
		sh.n -= len(ds.list)
		delete(sh.keys, key)
	}
	sh.epoch++
	sh.mu.Unlock()
}

// Reset forgets every denial, and keeps calls already on their way to the
// store from remembering theirs. Call it when the limits' configuration
// changes.
func (c *Cache) Reset() {
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		clear(sh.keys)
		sh.n = 0
		sh.epoch++
		sh.mu.Unlock()
	}
}

// Apply implements sluice.Store.
func (c *Cache) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	_, err := c.ApplyCached(ctx, checks, out)
	return err
}

// lookup is what the cache knows of one check before the call.
type lookup struct {
	epoch            uint64 // its shard's epoch
	seen             bool   // a live entry for its key and limit name exists
	known            bool   // and it is for this limit: the fields below are its
	matches          bool   // and it is a refusal of this check's cost
	refuses          bool   // an enforcing one: the call is refused
	cost, remaining  int64
	retryAt, resetAt int64
}

// ApplyCached is Apply that also reports whether the cache answered the call
// itself, without asking its store; cached is false whenever err is not nil.
// A call the cache answered says nothing about the store's health:
// failover.Store uses ApplyCached (see failover.CachingStore) to keep such
// calls away from its circuit breaker.
func (c *Cache) ApplyCached(ctx context.Context, checks []sluice.Check, out []sluice.Status) (cached bool, err error) {
	if len(out) != len(checks) {
		return false, fmt.Errorf("overlimit: %w: %d checks with %d statuses", sluice.ErrInvalidCheck, len(checks), len(out))
	}
	if c.next == nil {
		return false, fmt.Errorf("overlimit: %w: no store behind the cache", sluice.ErrStoreUnavailable)
	}
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("over-limit cache: %w", err)
	}
	var buf [8]lookup
	looks := buf[:]
	if len(checks) > len(buf) {
		looks = make([]lookup, len(checks))
	}
	now := c.now()
	peek, refused := false, false
	for i := range checks {
		peek = peek || checks[i].Cost == 0
		looks[i] = c.lookup(&checks[i], now)
		refused = refused || looks[i].refuses
	}
	if refused && !peek {
		answer(checks, looks, out, now)
		c.saved.Add(1)
		return true, nil
	}
	if err := c.next.Apply(ctx, checks, out); err != nil {
		if ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded) &&
			!errors.Is(err, sluice.ErrInvalidCheck) && !errors.Is(err, sluice.ErrInvalidLimit) {
			c.Reset() // the store may have restarted and lost its state
		}
		return false, err
	}
	recv := c.now()
	c.learn(checks, out, looks, now, recv)
	c.sweep(recv)
	return false, nil
}

func (c *Cache) now() int64 { return int64(c.clock().Sub(c.base)) }

func (c *Cache) shard(key string) *shard {
	return &c.shards[maphash.String(c.seed, key)&c.mask]
}

// lookup returns what the cache knows of ch at now, forgetting its denial if
// it has expired.
func (c *Cache) lookup(ch *sluice.Check, now int64) lookup {
	sh := c.shard(ch.Key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	l := lookup{epoch: sh.epoch}
	ds := sh.keys[ch.Key]
	if ds == nil {
		return l
	}
	j := ds.find(ch.Limit.ID())
	if j < 0 {
		return l
	}
	d := &ds.list[j]
	if d.until <= now {
		sh.remove(ch.Key, ds, j)
		return l
	}
	l.seen = true
	if d.limit == ch.Limit {
		l.known, l.cost, l.remaining, l.retryAt, l.resetAt = true, d.cost, d.remaining, d.retryAt, d.resetAt
		l.matches = d.cost > 0 && ch.Cost >= d.cost
		l.refuses = l.matches && !ch.Limit.Shadow()
	}
	return l
}

// learn updates the denials from the store's answer to a call sent at sent
// and answered at recv. The store decided in between: a denial refuses
// until its deadline counted from sent, never past the store's, and states
// times counted from recv, never before the store's.
func (c *Cache) learn(checks []sluice.Check, out []sluice.Status, looks []lookup, sent, recv int64) {
	admitted, denied := true, false
	for i := range checks {
		admitted = admitted && (out[i].Allowed || checks[i].Limit.Shadow())
		denied = denied || remembers(&checks[i], &out[i]) && !checks[i].Limit.Shadow()
	}
	for i := range checks {
		ch, st := &checks[i], &out[i]
		// A shadow limit's refusal refuses nothing: it is remembered beside
		// an enforcing one, to be stated in the refusals the cache repeats.
		deny := remembers(ch, st) && (denied || !ch.Limit.Shadow())
		// A check that fits beside a remembered refusal is told as a peek:
		// remember its figures for the refusals the cache repeats.
		view := denied && !deny && st.Allowed && ch.Cost > 0 && ch.Limit.Algorithm() != sluice.AlgorithmConcurrency
		if !deny && !view && !looks[i].seen {
			continue
		}
		sh := c.shard(ch.Key)
		sh.mu.Lock()
		switch {
		case deny && sh.epoch == looks[i].epoch:
			r := int64(st.RetryAfter)
			c.remember(sh, ch, sent, denial{
				limit:     ch.Limit,
				cost:      ch.Cost,
				remaining: st.Remaining,
				until:     algo.AddSat(sent, min(r-r>>10-int64(time.Microsecond), c.maxAge)),
				retryAt:   algo.AddSat(recv, r),
				resetAt:   algo.AddSat(recv, max(int64(st.ResetAfter), r)),
			}, true)
		case !deny:
			if ds := sh.keys[ch.Key]; ds != nil {
				if j := ds.find(ch.Limit.ID()); j >= 0 {
					// A fit at the denial's cost contradicts it, and so does
					// room for that cost (a peek's Remaining: capacity that
					// came back through another instance, an operator's
					// reset); an admission below it took capacity, so its
					// wait is now longer.
					if d := &ds.list[j]; d.limit != ch.Limit || d.cost > 0 && st.Remaining >= d.cost ||
						st.Allowed && (ch.Cost >= d.cost || admitted && ch.Cost > 0) {
						sh.remove(ch.Key, ds, j)
					}
				}
			}
			if view && sh.epoch == looks[i].epoch {
				c.remember(sh, ch, sent, denial{
					limit:     ch.Limit,
					remaining: st.Remaining,
					until:     algo.AddSat(sent, c.maxAge),
					resetAt:   algo.AddSat(recv, int64(st.ResetAfter)),
				}, false)
			}
		}
		sh.mu.Unlock()
	}
}

// remembers reports whether the store's refusal st of ch is one to
// remember: a check of a rate, refused by its state (not for want of
// room) with a wait that ends.
func remembers(ch *sluice.Check, st *sluice.Status) bool {
	return !st.Allowed && !st.NoRoom && ch.Cost > 0 && st.RetryAfter > 0 && st.RetryAfter != sluice.Never &&
		ch.Limit.Algorithm() != sluice.AlgorithmConcurrency
}

// ceilMicro returns ns nanoseconds rounded up to a whole microsecond, 0 for
// ns ≤ 0.
func ceilMicro(ns int64) time.Duration {
	ns = max(ns, 0)
	us := ns / 1000
	if ns%1000 != 0 {
		us++
	}
	return time.Duration(us * 1000)
}
