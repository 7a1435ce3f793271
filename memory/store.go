package memory

import (
	"context"
	"fmt"
	"hash/maphash"
	"math"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-dev/sluice"
)

// Store is an in-memory sluice.Store. Keys are split over shards by a hash
// of the key; a shard keeps one entry per key, holding the states of every
// limit checked under it, so the checks of one call on one key find their
// states with one lookup and take them with one lock. A call on keys the
// store holds, with every state in its key's entry, takes only those
// entries, each with a compare-and-swap and in one fixed order, so the
// checks of one call are atomic together; new keys and states, sliding
// logs and the store's upkeep take the shards' mutexes, in a fixed order.
// Store is safe for concurrent use. Make one with New, and Close it when
// done to stop the background sweep and the clock's ticker. The zero Store
// holds nothing: its Apply, Release and Refund return an error wrapping
// sluice.ErrStoreUnavailable, and its other methods do nothing.
//
// The store holds a bounded number of states (WithMaxKeys). To make room
// it evicts the least used state, which gives its key back what it had
// used, never one that refuses nor a lease book holding a lease in
// flight (unless its limit has been decided only in shadow mode, which
// refuses no one, for a window), and refuses a new key rather than free a
// client its limit refuses (see the package doc).
//
// The store never waits on I/O: a decision takes well under a microsecond,
// so it does not consult its context and decides a call whose context is
// done like any other, as sethvargo/go-limiter's memorystore does (and
// x/time/rate's Limiter.Allow takes no context). Reading a request's
// context costs a chain of calls through its layers on every decision, and
// a request whose client has left has still arrived: it counts.
type Store struct {
	clock  *clock
	hasher keyHasher
	// dir holds each shard's array as deciders without its mutex find it.
	dir      []atomic.Pointer[array]
	shards   []shard
	mask     uint64
	perShard int
	// keepExpired: see WithoutExpiryForTesting.
	keepExpired bool

	limits      registry
	evictions   atomic.Int64
	expirations atomic.Int64
	noRoom      atomic.Int64
	// limitsRefused counts the calls refused for a limit beyond the
	// registry's bound (see WithMaxLimits).
	limitsRefused atomic.Int64

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

// sweepGap is the least time between two on-demand sweeps of a shard (µs).
const sweepGap = 1000

// Stats counts what the store holds and has let go of.
type Stats struct {
	// Keys is the number of (key, limit) states held now.
	Keys int
	// Units is what the store holds now toward the bound of WithMaxKeys:
	// Keys, and one per 8 entries of room in its sliding logs' and
	// concurrency limits' arrays.
	Units int
	// MaxUnits is the bound the store keeps Units within: each shard's
	// share of WithMaxKeys' n (n divided by the shard count, rounded
	// down) times the shard count, so at most n and, full, at least 15/16
	// of it (a call may take a shard above its share: see WithMaxKeys).
	MaxUnits int
	// Evictions counts states dropped, with some of their capacity used, to
	// make room for new keys: each one hands its key back what it had used
	// (never a state that was refusing, nor a lease book holding a lease
	// that had not expired, under a limit decided in enforcing mode within
	// its window: see Store). A state is evicted alone: its
	// key's other states stay, and a key left with none goes.
	Evictions int64
	// Expirations counts states forgotten because they had returned to full
	// quota (by the sweep, or reclaimed by a full shard).
	Expirations int64
	// NoRoom counts checks of new states refused because their shard was
	// full of keys that refuse (or hold leases in flight), none of which
	// may be evicted (see Store), shadow checks among them: those report
	// the refusal, keep no state, and refuse no call.
	NoRoom int64
	// Limits is the number of distinct limits, by ID and algorithm, the
	// store knows: at most what WithMaxLimits allows, never fewer than
	// before.
	Limits int
	// LimitsRefused counts the calls refused with an error because they
	// checked a limit the store did not know when it already knew as many
	// as WithMaxLimits allows.
	LimitsRefused int64
	// ClockLateTicks counts the times the default clock's ticker ran more
	// than two resolutions after its previous tick (see
	// WithClockResolution): decisions in between decided at a time that
	// old. Zero with WithClock or a resolution of 0.
	ClockLateTicks int64
	// ClockMaxLag is the longest time between two ticks since New: the
	// most any decision's time has lagged the exact time (a refusal's
	// never does).
	ClockMaxLag time.Duration
}

// New returns a Store configured by opts.
func New(opts ...Option) *Store {
	o := defaults()
	for _, opt := range opts {
		opt(&o)
	}
	n := 1 << bits.Len(uint(o.shards-1))
	for n > 1 && o.maxKeys/n < 16 {
		n /= 2 // at least 16 keys a shard: rounding down loses < 1/16
	}
	stop := make(chan struct{})
	s := &Store{
		clock:    newClock(o.clock, o.resolution, stop),
		hasher:   newKeyHasher(),
		dir:      make([]atomic.Pointer[array], n),
		shards:   make([]shard, n),
		mask:     uint64(n - 1),
		perShard: o.maxKeys / n, // rounded down: together never above maxKeys
		stop:     stop,
		done:     make(chan struct{}),
	}
	s.keepExpired = o.keepExpired
	s.limits.max = o.maxLimits
	s.limits.snap.Store(&known{table: newRefTable(16, maphash.MakeSeed())})
	for i := range s.shards {
		sh := &s.shards[i]
		sh.dir = &s.dir[i]
		sh.side = map[hash][]sideState{}
		sh.publish(makeArray(0, 1))
	}
	if o.sweepInterval > 0 {
		go s.sweepEvery(o.sweepInterval)
	} else {
		close(s.done)
	}
	return s
}

// Close stops the background sweep and the clock's ticker (see
// WithClockResolution) and returns when both have ended. The store still
// answers afterwards, reading the clock for every decision.
func (s *Store) Close() error {
	if s.zero() {
		return nil
	}
	s.closeOnce.Do(func() {
		s.clock.close()
		close(s.stop)
	})
	<-s.done
	s.clock.wait()
	return nil
}

// Stats returns the current counts.
func (s *Store) Stats() Stats {
	if s.zero() {
		return Stats{}
	}
	st := Stats{
		MaxUnits:       s.perShard * len(s.shards),
		Evictions:      s.evictions.Load(),
		Expirations:    s.expirations.Load(),
		NoRoom:         s.noRoom.Load(),
		Limits:         s.limits.count(),
		LimitsRefused:  s.limitsRefused.Load(),
		ClockLateTicks: s.clock.lateTicks.Load(),
		ClockMaxLag:    time.Duration(s.clock.maxGap.Load()) * time.Microsecond,
	}
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		st.Keys += sh.keys
		st.Units += sh.used()
		sh.mu.Unlock()
	}
	return st
}

// zero reports whether s is the zero Store, which New did not make.
func (s *Store) zero() bool { return s.clock == nil }

// errZero is the error of the zero Store's Apply, Release and Refund.
func errZero() error {
	return fmt.Errorf("memory: %w: the zero Store holds nothing (make one with memory.New)", sluice.ErrStoreUnavailable)
}

// now is the time for upkeep: it may lag (see clock).
func (s *Store) now() int64 { return s.clock.now() }

// liveAfter returns the time a state's expiry must be after for a decision
// at now to read the state as it stands: now, so that a state past its
// expiry is read as a fresh one, as the sweep would have forgotten it and
// as a Redis key past its TTL is gone (else whether a limit reloaded with
// a longer window counts it would depend on when the sweep last ran).
func (s *Store) liveAfter(now int64) int64 {
	if s.keepExpired {
		return math.MinInt64
	}
	return now
}

// keyHash returns key's identity (see keyHasher).
func (s *Store) keyHash(key string) hash { return s.hasher.of(key) }

func (s *Store) shardIndex(h hash) uint32 { return uint32((h.h1 >> 1) & s.mask) }

// Apply implements sluice.Store; ctx is not consulted. It returns an error
// wrapping sluice.ErrInvalidCheck, having decided nothing, for an out not as
// long as checks and for a check that cannot be decided on its own (see
// sluice.Limit.Decide); other checks that sluice.ValidateChecks refuses, such
// as a key and limit named twice, it may decide (Limiter never passes them).
func (s *Store) Apply(_ context.Context, checks []sluice.Check, out []sluice.Status) error {
	if s.zero() {
		return errZero()
	}
	if len(out) != len(checks) {
		return fmt.Errorf("%w: %d checks with %d statuses", sluice.ErrInvalidCheck, len(checks), len(out))
	}
	_, err := s.apply(checks, out)
	return err
}
