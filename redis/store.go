package redis

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"github.com/sluice-dev/sluice"
)

// Store is a sluice.Store kept in Redis. A call whose keys share a Cluster
// slot (on a standalone server or with Sentinel: every call) is decided by
// one script run, atomically and all-or-nothing; a call spanning slots by
// the reservation protocol described in the package documentation.
//
// Store is safe for concurrent use by any number of goroutines and, since
// all state and time live in Redis, by any number of processes. The zero
// Store has no connection: its calls return an error wrapping
// sluice.ErrStoreUnavailable.
type Store struct {
	client  rueidis.Client
	cluster bool
	owned   bool
	timeout time.Duration
	now     func() time.Time // nil: Redis's TIME
	minTTL  string           // least TTL of a write, ms
	batch   *batcher         // nil: one script run per call
	durable *durable         // nil: no WAIT after a write
	scripts *scripts         // nil if scriptsErr
	// scriptsErr is what every call fails with when the build lacks a Lua
	// file.
	scriptsErr error

	unrefunded atomic.Int64 // see Unrefunded

	master atomic.Pointer[string]  // the node of every key off a Cluster
	slots  atomic.Pointer[slotMap] // a Cluster's masters, from the watch
}

// New returns a Store that keeps its state through client, which may be a
// standalone, Sentinel or Cluster client (see Options and NewClient for
// building one). The caller keeps ownership of client: Close does not close
// it (closing a client from NewClient also ends the connections it makes
// in the background; see Options.ClientOption for one made otherwise). A
// nil client makes a Store with no connection, as the zero Store.
func New(client rueidis.Client, opts ...Option) *Store {
	if client == nil {
		return &Store{}
	}
	o := options{timeout: DefaultTimeout, batchRuns: DefaultBatchRuns}
	for _, opt := range opts {
		opt(&o)
	}
	s := &Store{
		client:  client,
		cluster: client.Mode() == rueidis.ClientModeCluster,
		timeout: o.timeout,
		now:     o.now,
		minTTL:  "1",
	}
	s.scripts, s.scriptsErr = loadScripts()
	if !s.cluster {
		s.durable = newDurable(o.replicas, o.replicaWait)
	}
	if o.batchRuns > 0 && !s.cluster {
		s.batch = &batcher{runs: o.batchRuns}
	}
	if o.now != nil {
		s.minTTL = strconv.FormatInt(testTTL.Milliseconds(), 10)
	}
	if !s.cluster {
		addr := singleNode(client)
		s.master.Store(&addr)
	}
	return s
}

// unusable returns why s cannot run its scripts, with what for the error's
// text: it is the zero Store, or its scripts did not load; nil otherwise.
func (s *Store) unusable(what string) error {
	if s.client == nil {
		return fmt.Errorf("redis store: %w: no connection (the zero Store, or New with a nil client)", sluice.ErrStoreUnavailable)
	}
	if s.scriptsErr != nil {
		return s.fail(what, s.scriptsErr)
	}
	return nil
}

// Close closes the connection if Dial opened it (see NewClient: when Close
// returns, no connection is being made for the store, even in the
// background, and none is kept for later). A Store made by New leaves its
// client to the caller. Close is idempotent.
func (s *Store) Close() error {
	if s.owned {
		s.client.Close()
	}
	return nil
}

// bounded returns ctx bounded by the store's timeout (WithTimeout), or ctx
// itself when the store has none, and the function that releases it.
func (s *Store) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.timeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, s.timeout)
}

// Apply implements sluice.Store: it decides checks as one call and writes
// their statuses to out. An error means no decision; it wraps
// sluice.ErrStoreUnavailable unless the caller's context was cancelled,
// and sluice.ErrInvalidCheck when out is not as long as checks or a check
// cannot be decided.
func (s *Store) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	if len(out) != len(checks) {
		return fmt.Errorf("redis store: %w: %d statuses for %d checks", sluice.ErrInvalidCheck, len(out), len(checks))
	}
	_, err := s.apply(ctx, checks, out, nil)
	return err
}

// apply is Apply that also returns the script's time of the decision (µs
// since sluice.Epoch): of a call spanning Cluster slots, the earliest of
// its slots' times, by which tests check promises in Redis time. When ats
// is not nil, ats[i] is the time of check i's own slot, by which its lease
// ends and goes back.
func (s *Store) apply(ctx context.Context, checks []sluice.Check, out []sluice.Status, ats []int64) (int64, error) {
	if len(out) < len(checks) {
		return 0, fmt.Errorf("redis store: %w: %d statuses for %d checks", sluice.ErrInvalidCheck, len(out), len(checks))
	}
	if err := s.unusable("apply script"); err != nil {
		return 0, err
	}
	if s.batch != nil { // standalone or Sentinel: one slot, one call
		c, err := newCall(checks, nil, nil, out)
		if err != nil {
			return 0, err
		}
		err = s.batch.apply(ctx, s, c) // bounded by s.timeout on its own
		now := c.now
		c.release()
		fillTimes(ats, now)
		return now, err
	}
	ctx, cancel := s.bounded(ctx)
	defer cancel()
	if !s.cluster || len(checks) == 1 { // one slot: one call
		c, err := newCall(checks, nil, nil, out)
		if err != nil {
			return 0, err
		}
		s.runCalls(ctx, modeApply, "", []*call{c})
		now, err := c.now, c.err
		c.release()
		fillTimes(ats, now)
		return now, err
	}
	keys := make([]string, len(checks))
	for i := range checks {
		if err := decidable(&checks[i]); err != nil {
			return 0, err // before any slot reserves
		}
		keys[i] = Key(checks[i].Key, checks[i].Limit.ID())
	}
	groups := s.groups(keys)
	if len(groups) == 1 {
		c, err := newCall(checks, keys, groups[0], out)
		if err != nil {
			return 0, err
		}
		s.runCalls(ctx, modeApply, "", []*call{c})
		fillTimes(ats, c.now)
		return c.now, c.err
	}
	return s.crossSlot(ctx, checks, keys, groups, out, ats)
}

// fillTimes sets every element of ats (nil: none) to now.
func fillTimes(ats []int64, now int64) {
	for i := range ats {
		ats[i] = now
	}
}

// groups returns the indices of checks by Cluster slot, in ascending slot
// order (the order every call reserves in); one group off a cluster.
func (s *Store) groups(keys []string) [][]int {
	all := make([]int, len(keys))
	for i := range all {
		all[i] = i
	}
	if !s.cluster || len(keys) == 1 {
		return [][]int{all}
	}
	slots := make([]uint16, len(keys))
	for i, k := range keys {
		slots[i] = slot(k)
	}
	slices.SortStableFunc(all, func(a, b int) int { return int(slots[a]) - int(slots[b]) })
	var groups [][]int
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && slots[all[j]] == slots[all[i]] {
			j++
		}
		groups = append(groups, all[i:j:j])
		i = j
	}
	return groups
}

// run decides the checks idx (all in one slot) with one apply.lua run in
// the given mode, writing their statuses to out.
func (s *Store) run(ctx context.Context, mode, token string, checks []sluice.Check, keys []string, idx []int, out []sluice.Status) (*call, error) {
	c, err := newCall(checks, keys, idx, out)
	if err != nil {
		return nil, err
	}
	s.runCalls(ctx, mode, token, []*call{c})
	return c, c.err
}

// undoWord reads one undo word of a reserve run's reply: a number or a
// string.
func undoWord(msg rueidis.RedisMessage) (string, error) {
	if n, err := msg.AsInt64(); err == nil && msg.IsInt64() {
		return strconv.FormatInt(n, 10), nil
	}
	return msg.ToString()
}

func itoa(n int) string { return strconv.Itoa(n) }

// timeArg is the scripts' ARGV[1]: the test clock, or "" for Redis's TIME.
func (s *Store) timeArg() string {
	if s.now == nil {
		return ""
	}
	return strconv.FormatInt(sluice.MicrosSinceEpoch(s.now()), 10)
}

// fail wraps err from Redis: every failure to decide is
// sluice.ErrStoreUnavailable, except a context the caller cancelled.
func (s *Store) fail(what string, err error) error {
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("redis store: %s: %w", what, err)
	}
	return fmt.Errorf("redis store: %w: %s: %w", sluice.ErrStoreUnavailable, what, err)
}

// failCtx is fail for a call whose context ended, with the cause it was
// given (context.WithCancelCause): a cancellation by the caller, whatever
// its cause, is no failure of the store.
func (s *Store) failCtx(what string, ctx context.Context) error {
	err := ctx.Err()
	if cause := context.Cause(ctx); cause != err {
		err = fmt.Errorf("%w: %w", err, cause)
	}
	return s.fail(what, err)
}
