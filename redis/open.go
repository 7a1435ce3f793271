package redis

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/overlimit"
)

// reconnectEvery is how often a store opened without Redis tries to connect
// again.
const reconnectEvery = 250 * time.Millisecond

// Guarded is the Redis store as a service runs it, and as `sluice serve`
// runs it: a Store in Redis behind an over-limit cache (overlimit.Cache: a
// client that keeps knocking after a refusal is refused without a round
// trip), inside a failover (failover.Store: a circuit breaker, and
// Options.OnStoreError for every call Redis cannot decide). Open returns
// one.
//
// Once connected, it reads its deployment every 100 ms: the masters of a
// Cluster's slots, so that the failover keeps a circuit breaker per master
// (Store.Node), and every master's replication history, so that writes a
// failover lost are counted (Losses) and logged, as far as it had read the
// old master (see Losses.LostWrites). What its local fallback
// admits is charged to Redis before Redis decides those keys again
// under an id, once (Store.ChargeOnce); package documentation, Failover,
// has the bounds.
//
// A Guarded does not need Redis to exist: until Redis can be reached, and
// whenever it cannot, its calls are decided by OnStoreError, never failed
// for want of Redis. It connects in the background and decides on Redis
// from the first call after it has (or, once the breaker has opened, from
// the breaker's next probe: within about a second of Redis's arrival with
// the defaults).
//
// With Options.Lease, a Leased in front of the failover decides most
// checks of leased limits in memory, from quota leased from Redis, and
// hands it the rest (see Leased).
//
// A Guarded is safe for concurrent use by any number of goroutines. The
// zero Guarded has no store: its calls return an error wrapping
// sluice.ErrStoreUnavailable, and Close does nothing. Make one with Open.
type Guarded struct {
	failover *failover.Store
	leased   *Leased // nil: nothing leased
	cache    *overlimit.Cache
	local    *memory.Store
	redis    *lazy

	ownLocal bool
	closed   sync.Once
}

// Open returns the store Options describes, ready for sluice.NewLimiter: a
// Store in Redis (standalone, Sentinel or Cluster, each Apply bounded by
// o.Timeout, 50 ms by default) behind an over-limit cache, inside a
// failover that decides by o.OnStoreError when Redis cannot. See Guarded.
//
// Open tries to connect once, waiting for the outcome until ctx ends.
// Connected, it reads the deployment once (every master's replication
// history, see Losses) before it returns, so a master that restarts
// without its data later is always counted. If Redis cannot be reached, Open still returns the store, which keeps
// trying in the background every quarter of a second and decides by
// o.OnStoreError meanwhile; it says so to o.Logger, and Ping reports the
// connection error, which wraps sluice.ErrStoreUnavailable. So a service
// may start before its Redis, or while it is down. With o.MustConnect,
// Open fails instead, with that error.
//
// Otherwise Open fails only on options that can never work: an unknown
// Mode, sentinel mode without MasterSet, a DB other than 0 in cluster mode,
// an invalid OnStoreError, or cluster mode on addresses that answer but are
// not a Redis Cluster. opts configure the Redis store as for New (say,
// WithBatching); a WithTimeout among them overrides o.Timeout.
//
// The caller closes the store with Close.
func Open(ctx context.Context, o Options, opts ...Option) (*Guarded, error) {
	co, dials, err := o.clientOption()
	if err != nil {
		return nil, err
	}
	if !o.OnStoreError.Valid() {
		return nil, fmt.Errorf("redis: Open with invalid OnStoreError %v", o.OnStoreError)
	}
	g := &Guarded{local: o.Local}
	if g.local == nil {
		g.local, g.ownLocal = memory.New(), true
	}
	log := o.Logger
	g.redis = &lazy{
		mode: o.Mode, co: co, dials: dials, log: log,
		opts:  append(o.storeOptions(), opts...),
		watch: &watcher{log: log},
		stop:  make(chan struct{}), done: make(chan struct{}),
	}
	g.cache = overlimit.New(g.redis, o.OverLimit)
	onChange := func(node string, from, to failover.BreakerState) {
		if log == nil {
			return
		}
		// An outage is one line when it starts and one when it ends: a
		// probe that finds Redis still down (half-open → open) is Debug.
		switch {
		case to == failover.BreakerOpen && from == failover.BreakerHalfOpen:
			log.Debug("redis store still failing: probe failed, circuit open again", "node", node)
		case to == failover.BreakerOpen:
			log.Warn("redis store failing: circuit open, deciding by on_store_error", "node", node,
				"policy", o.OnStoreError.String(), "from", from.String())
		case to == failover.BreakerClosed:
			log.Info("redis store recovered: circuit closed, deciding on Redis again", "node", node)
		}
	}
	var so options
	for _, opt := range g.redis.opts {
		opt(&so)
	}
	// The Redis store bounds every call itself and the failover sets no
	// deadline of its own: on standalone and Sentinel the store's batched
	// calls share one timer per script run, where a context.WithTimeout per
	// decision would make a timer for every call. A
	// call that charges first is the exception: its charge and its
	// decision share one Timeout.
	g.failover, err = failover.New(g.cache, g.local, failover.Options{OnError: o.OnStoreError, Timeout: -1,
		ChargeTimeout: so.timeout, Instances: o.Instances, Breaker: o.Breaker, OnBreakerChange: onChange,
		Node: g.redis.node, ChargeOnce: g.redis.chargeOnce})
	if err != nil {
		g.closeLocal()
		return nil, fmt.Errorf("redis: %w", err)
	}

	g.redis.watch.onMiss = g.failover.Unreachable
	if o.Lease.enabled() {
		// Units the leases give back are capacity coming back other than
		// with time: the cache forgets the refusals of their keys.
		g.leased = newLeasedTelling(g.failover, g.redis, so.now, o.Instances, o.Lease, g.cache.Invalidate)
		g.redis.watch.onLoss = g.leased.drop
		g.redis.watch.onReset = g.leased.resetNotice
	}

	first := make(chan error, 1)
	go g.redis.run(first)
	dialTimeout := co.Dialer.Timeout // what a timeout of err is
	select {
	case err = <-first:
	case <-ctx.Done():
		err = fmt.Errorf("redis: %w: connecting to %v: %w", sluice.ErrStoreUnavailable, co.InitAddress, ctx.Err())
		dialTimeout = 0
	}
	switch {
	case err == nil:
		return g, nil
	case !errors.Is(err, sluice.ErrStoreUnavailable) || o.MustConnect:
		g.Close()
		return nil, err
	}
	g.redis.late.Store(true)
	if log != nil && g.redis.s.Load() == nil {
		log.Warn("redis store not reachable: deciding by on_store_error until it is", append([]any{"policy", o.OnStoreError.String(),
			"addresses", co.InitAddress}, unreachableAttrs(err, dialTimeout)...)...)
	}
	return g, nil
}

// Apply implements sluice.Store. It fails only when the caller's context
// ends first, on an invalid check, or when OnStoreError is failover.Local
// and the local store fails too; a failure of Redis is never the caller's.
func (g *Guarded) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	if g.failover == nil {
		return errNoStore()
	}
	if g.leased != nil {
		return g.leased.Apply(ctx, checks, out)
	}
	return g.failover.Apply(ctx, checks, out)
}

// Release implements sluice.Releaser: each lease goes back to the store
// that holds it, Redis or the local store (see failover.Store.Release).
func (g *Guarded) Release(ctx context.Context, checks []sluice.Check, leases []int64) error {
	if g.failover == nil {
		return errNoStore()
	}
	return g.failover.Release(ctx, checks, leases)
}

// errNoStore is the error of the zero Guarded's and the zero Leased's
// calls.
func errNoStore() error {
	return fmt.Errorf("redis store: %w: no store (the zero Guarded or Leased, or NewLeased without its stores)", sluice.ErrStoreUnavailable)
}

// Ping reports whether Redis answers a PING now: nil, or an error wrapping
// sluice.ErrStoreUnavailable (before the store has connected, the last
// connection error). It waits as long as ctx allows.
func (g *Guarded) Ping(ctx context.Context) error {
	if g.redis == nil {
		return errNoStore()
	}
	s, err := g.redis.store()
	if err != nil {
		return err
	}
	c := s.client
	if err := do(ctx, c, func() rueidis.Completed { return c.B().Ping().Build() }).Error(); err != nil {
		return s.fail("ping", err)
	}
	return nil
}

// Losses reports what Redis forgot of what it had acknowledged, as the
// store saw it (see Losses): each is also a log line.
func (g *Guarded) Losses() Losses {
	if g.redis == nil {
		return Losses{}
	}
	return g.redis.watch.losses()
}

// Unrefunded is Store.Unrefunded of the store once connected (0 before):
// the reservations of refused calls spanning Cluster slots that could not
// be refunded, and stay counted until their windows pass or their buckets
// refill.
func (g *Guarded) Unrefunded() int64 {
	if g.redis == nil {
		return 0
	}
	if s := g.redis.s.Load(); s != nil {
		return s.Unrefunded()
	}
	return 0
}

// Evicting returns the Redis masters the store has seen that may evict
// keys when full — a maxmemory set with a maxmemory-policy other than
// noeviction — each as "address (maxmemory-policy P, maxmemory N bytes)",
// and how many masters it has read: 0 until its first read of every node
// of the deployment ends (that read follows the connection, and repeats
// every few seconds). Once seen is above 0, masters holds every master of
// that read that may evict. An evicted state gives its client a fresh
// quota (see Losses.Evicted).
func (g *Guarded) Evicting() (masters []string, seen int) {
	if g.redis == nil {
		return nil, 0
	}
	m := &g.redis.watch.memory
	seen = int(m.seen.Load()) // before the list, which a read's count follows
	if l := m.evicting.Load(); l != nil {
		masters = *l
	}
	return masters, seen
}

// Failover returns the failover around Redis, for its Stats: decisions
// made by OnStoreError, store errors, the breakers' states per node.
func (g *Guarded) Failover() *failover.Store { return g.failover }

// closeSettle bounds how long Close charges Redis with what the fallback
// admitted.
const closeSettle = 5 * time.Second

// Cache returns the over-limit cache in front of Redis, for its Stats.
func (g *Guarded) Cache() *overlimit.Cache { return g.cache }

// Leases returns the leased quota in front of the failover, for its Stats
// and Return; nil when Options.Lease leases nothing.
func (g *Guarded) Leases() *Leased { return g.leased }

// Local returns the store failover.Local decides on (Options.Local, or the
// one Open made), for its Stats.
func (g *Guarded) Local() *memory.Store { return g.local }

// Close gives back the unspent units of its leases (see Leased.Close),
// charges Redis with what the fallback admitted and has not charged yet
// (failover.Store.Settle; what it cannot charge within closeSettle is
// lost with the instance, and logged), stops connecting, closes the
// connection to Redis and the local store Open made (not an
// Options.Local), and returns nil. When it returns, no connection to
// Redis is being made, not even in the background, and none is kept for
// later. Calls after Close are decided by OnStoreError. Close is
// idempotent.
func (g *Guarded) Close() error {
	if g.redis == nil {
		return nil
	}
	g.closed.Do(func() {
		if g.leased != nil {
			if err := g.leased.Close(); err != nil && g.redis.log != nil {
				g.redis.log.Warn("redis store: leases not given back on close: they stay counted until they end",
					"err", err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), closeSettle)
		if err := g.failover.Settle(ctx); err != nil && g.redis.log != nil {
			g.redis.log.Warn("redis store: what the fallback admitted was not all charged to Redis on close: the fleet may admit it again",
				"err", err)
		}
		cancel()
		g.redis.close()
		g.closeLocal()
	})
	return nil
}

func (g *Guarded) closeLocal() {
	if g.ownLocal {
		g.local.Close()
	}
}

// lazy is a sluice.Store that becomes a Redis Store once it has connected,
// and fails every call with sluice.ErrStoreUnavailable until then.
type lazy struct {
	mode  Mode
	co    rueidis.ClientOption
	dials *connector // co's DialCtxFn's, shared by every attempt's client
	opts  []Option
	log   *slog.Logger

	watch *watcher

	s    atomic.Pointer[Store]
	err  atomic.Pointer[error] // the last connection error, while s is nil
	late atomic.Bool           // Open returned before s was set
	stop chan struct{}         // closed by close
	done chan struct{}         // closed when run returns
	once sync.Once
}

// store returns the connected Store, or the error calls fail with until
// there is one.
func (l *lazy) store() (*Store, error) {
	if s := l.s.Load(); s != nil {
		return s, nil
	}
	if err := l.err.Load(); err != nil {
		return nil, *err
	}
	return nil, fmt.Errorf("redis store: %w: connecting to %v", sluice.ErrStoreUnavailable, l.co.InitAddress)
}

// Apply implements sluice.Store.
func (l *lazy) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	s, err := l.store()
	if err != nil {
		return err
	}
	return s.Apply(ctx, checks, out)
}

// node is Store.Node; until connected, the server's address on a
// standalone server, else "".
func (l *lazy) node(c *sluice.Check) string {
	if s := l.s.Load(); s != nil {
		return s.Node(c)
	}
	if (l.mode == "" || l.mode == ModeStandalone) && len(l.co.InitAddress) > 0 {
		return l.co.InitAddress[0]
	}
	return ""
}

// chargeOnce is Store.ChargeOnce.
func (l *lazy) chargeOnce(ctx context.Context, checks []sluice.Check, ids []string) error {
	s, err := l.store()
	if err != nil {
		return err
	}
	return s.ChargeOnce(ctx, checks, ids)
}

// Release implements sluice.Releaser.
func (l *lazy) Release(ctx context.Context, checks []sluice.Check, leases []int64) error {
	s, err := l.store()
	if err != nil {
		return err
	}
	return s.Release(ctx, checks, leases)
}

// run connects, sending the first attempt's outcome to first, and tries
// again every reconnectEvery until it has connected or close is called.
// Past the first attempt it logs a connection and each new error. Once
// connected, it reads the deployment once before sending to first, then
// watches it (Store.watch) until close.
func (l *lazy) run(first chan<- error) {
	defer close(l.done)
	var last string // the last error seen
	for attempt := 0; ; attempt++ {
		c, err := connect(l.mode, l.co, l.dials)
		if err == nil {
			s := New(c, l.opts...)
			s.owned = true
			l.s.Store(s)
			if l.log != nil && (attempt > 0 || l.late.Load()) {
				l.log.Info("redis store connected", "addresses", l.co.InitAddress)
			}
		} else {
			l.err.Store(&err)
			if attempt > 0 && l.log != nil && err.Error() != last {
				l.log.Warn("redis store still not reachable",
					append([]any{"addresses", l.co.InitAddress}, unreachableAttrs(err, l.co.Dialer.Timeout)...)...)
			}
			last = err.Error()
		}
		if err == nil {
			// The first read of the deployment is the history later reads
			// are compared with: read before Open returns, a master that
			// restarts empty after it is always seen.
			l.s.Load().watchOnce(l.watch)
		}
		if attempt == 0 {
			first <- err
		}
		if err == nil {
			l.s.Load().watch(l.watch, l.stop)
			return
		}
		select {
		case <-l.stop:
			return
		case <-time.After(reconnectEvery):
		}
	}
}

// close stops run, closes the connection it made, if any, and ends the
// dials under way and the connections kept for a later attempt.
func (l *lazy) close() {
	l.once.Do(func() {
		close(l.stop)
		<-l.done
		if s := l.s.Load(); s != nil {
			s.Close()
		}
		l.dials.close()
	})
}
