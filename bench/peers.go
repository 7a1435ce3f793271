// Package bench sets sluice's in-memory store side by side with peer Go rate
// limiters: every limiter gets the same keys, the same limit and the same
// loop, so their costs per decision can be compared within one run.
//
// The benchmarks live in memory_test.go; cmd/report runs them, measures heap
// bytes per tracked key and prints the comparison that BENCHMARKS.md records.
package bench

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/go-chi/httprate"
	sethvargo "github.com/sethvargo/go-limiter"
	"github.com/sethvargo/go-limiter/memorystore"
	"github.com/throttled/throttled/v2"
	"github.com/throttled/throttled/v2/store/memstore"
	ulule "github.com/ulule/limiter/v3"
	ulmemory "github.com/ulule/limiter/v3/drivers/store/memory"
	"golang.org/x/time/rate"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// The limit every library enforces for every key: Rate units per Period
// (one second in the benchmarks) with a burst of Rate. It is high enough that
// no key is ever refused in the benchmarks (on two cores no limiter comes near
// 10,000 requests per second per key over 65,536 keys), so every library does
// the same work: the "existing key, admitted" path.
const Rate = 10_000

// Config sizes one limiter instance.
type Config struct {
	// MaxKeys is the number of keys the instance must hold without evicting
	// (for the peers that have a bound at all).
	MaxKeys int
	// Period is the window or refill period of the limit: Rate per Period.
	Period time.Duration
}

// A Peer is one limiter under test.
type Peer struct {
	// Name identifies the peer in benchmark names and reports; it never ends
	// in "-<digits>", which go test uses for the -cpu suffix.
	Name string
	// Lib is the module and the way it is used, for the report.
	Lib string
	// New returns a fresh limiter.
	New func(c Config) Instance
}

// An Instance is one limiter's state.
type Instance interface {
	// Worker returns a decision function for one goroutine: it spends one
	// unit for key and reports whether the request is admitted. A worker is
	// used by one goroutine only; workers of one Instance share its state.
	Worker() func(key string) bool
	// Close releases background goroutines.
	Close()
}

// A Holder is an Instance that reports how many keys it holds and how many
// it has evicted; HeapPerKey uses it to check that every key is held.
type Holder interface {
	Held() (keys int, evicted int64)
}

// Peers lists every limiter, sluice first.
var Peers = []Peer{
	{"sluice-gcra", "sluice memory.Store + Limiter.Allow, GCRA",
		func(c Config) Instance { return newSluice(sluice.GCRA(Rate, c.Period), c) }},
	{"sluice-tokenbucket", "sluice memory.Store + Limiter.Allow, token bucket",
		func(c Config) Instance { return newSluice(sluice.TokenBucket(Rate, c.Period), c) }},
	{"xtime-mutexmap", "golang.org/x/time/rate: map[string]*rate.Limiter + sync.Mutex",
		func(c Config) Instance { return newXTimeMutex(c) }},
	{"xtime-syncmap", "golang.org/x/time/rate: sync.Map of *rate.Limiter",
		func(c Config) Instance { return &xtimeSyncMap{per: xtimeLimit(c)} }},
	{"sethvargo", "github.com/sethvargo/go-limiter memorystore",
		func(c Config) Instance { return newSethvargo(c) }},
	{"ulule", "github.com/ulule/limiter/v3 + drivers/store/memory",
		func(c Config) Instance { return newUlule(c) }},
	{"httprate", "github.com/go-chi/httprate local counter (RateLimiter.Status + LimitCounter.IncrementBy)",
		func(c Config) Instance { return newHTTPRate(c) }},
	{"throttled-lru", "github.com/throttled/throttled/v2 GCRA + memstore bounded (LRU)",
		func(c Config) Instance { return newThrottled(c, c.MaxKeys) }},
	{"throttled-map", "github.com/throttled/throttled/v2 GCRA + memstore unbounded (map)",
		func(c Config) Instance { return newThrottled(c, 0) }},
}

// PeerByName returns the peer called name.
func PeerByName(name string) (Peer, bool) {
	for _, p := range Peers {
		if p.Name == name {
			return p, true
		}
	}
	return Peer{}, false
}

// Keys returns n distinct keys, "key-0" … "key-<n-1>".
func Keys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("key-%d", i)
	}
	return keys
}

// --- sluice ---

type sluiceInst struct {
	store *memory.Store
	lim   *sluice.Limiter
	limit sluice.Limit
	plan  []sluice.Check // a plan's checks (newSluicePlan), else nil
}

func newSluice(l sluice.Limit, c Config) *sluiceInst {
	if err := l.Err(); err != nil {
		panic(err)
	}
	st := memory.New(memory.WithSweepInterval(0), memory.WithMaxKeys(c.MaxKeys))
	return &sluiceInst{store: st, lim: sluice.NewLimiter(st), limit: l}
}

func (s *sluiceInst) Worker() func(string) bool {
	if s.plan != nil {
		return s.planWorker()
	}
	ctx := context.Background()
	var d sluice.Decision
	checks := []sluice.Check{{Limit: s.limit, Cost: 1}}
	return func(key string) bool {
		checks[0].Key = key
		if err := s.lim.Allow(ctx, checks, &d); err != nil {
			panic(err)
		}
		return d.Allowed
	}
}

func (s *sluiceInst) Close() { s.store.Close() }

// Held reports the states the store holds and how many it has evicted.
func (s *sluiceInst) Held() (keys int, evicted int64) {
	st := s.store.Stats()
	return st.Keys, st.Evictions
}

// --- golang.org/x/time/rate ---

func xtimeLimit(c Config) rate.Limit { return rate.Limit(Rate / c.Period.Seconds()) }

type xtimeMutex struct {
	mu  sync.Mutex
	m   map[string]*rate.Limiter
	per rate.Limit
}

func newXTimeMutex(c Config) *xtimeMutex {
	return &xtimeMutex{m: make(map[string]*rate.Limiter), per: xtimeLimit(c)}
}

func (x *xtimeMutex) Worker() func(string) bool {
	return func(key string) bool {
		x.mu.Lock()
		l := x.m[key]
		if l == nil {
			l = rate.NewLimiter(x.per, Rate)
			x.m[key] = l
		}
		x.mu.Unlock()
		return l.Allow()
	}
}

func (x *xtimeMutex) Close() {}

type xtimeSyncMap struct {
	m   sync.Map
	per rate.Limit
}

func (x *xtimeSyncMap) Worker() func(string) bool {
	return func(key string) bool {
		v, ok := x.m.Load(key)
		if !ok {
			v, _ = x.m.LoadOrStore(key, rate.NewLimiter(x.per, Rate))
		}
		return v.(*rate.Limiter).Allow()
	}
}

func (x *xtimeSyncMap) Close() {}

// --- sethvargo/go-limiter ---

type sethvargoInst struct{ st sethvargo.Store }

func newSethvargo(c Config) *sethvargoInst {
	st, err := memorystore.New(&memorystore.Config{Tokens: Rate, Interval: c.Period})
	if err != nil {
		panic(err)
	}
	return &sethvargoInst{st: st}
}

func (s *sethvargoInst) Worker() func(string) bool {
	ctx := context.Background()
	return func(key string) bool {
		_, _, _, ok, err := s.st.Take(ctx, key)
		if err != nil {
			panic(err)
		}
		return ok
	}
}

func (s *sethvargoInst) Close() { s.st.Close(context.Background()) }

// --- ulule/limiter ---

type ululeInst struct{ lim *ulule.Limiter }

func newUlule(c Config) *ululeInst {
	st := ulmemory.NewStore()
	return &ululeInst{lim: ulule.New(st, ulule.Rate{Period: c.Period, Limit: Rate})}
}

func (u *ululeInst) Worker() func(string) bool {
	ctx := context.Background()
	return func(key string) bool {
		c, err := u.lim.Get(ctx, key)
		if err != nil {
			panic(err)
		}
		return !c.Reached
	}
}

// Close is a no-op: ulule's memory store stops its cleaner goroutine only
// when the store is garbage collected.
func (u *ululeInst) Close() {}

// --- go-chi/httprate ---

// httprateInst makes httprate's decision without HTTP: exactly what
// RateLimiter.OnLimit does (under the limiter's mutex: the sliding-window
// rate from the counter, then IncrementBy when the request fits) minus
// writing response headers. The local counter is passed explicitly so that
// windows are plain truncations of the clock, which Status and IncrementBy
// then agree on.
type httprateInst struct {
	mu     sync.Mutex // RateLimiter.OnLimit holds the limiter's mutex the same way
	rl     *httprate.RateLimiter
	lc     httprate.LimitCounter
	period time.Duration
}

func newHTTPRate(c Config) *httprateInst {
	lc := httprate.NewLocalLimitCounter(c.Period)
	rl := httprate.NewRateLimiter(Rate, c.Period, httprate.WithLimitCounter(lc))
	return &httprateInst{rl: rl, lc: rl.Counter(), period: c.Period}
}

func (h *httprateInst) Worker() func(string) bool {
	return func(key string) bool {
		window := time.Now().UTC().Truncate(h.period)
		h.mu.Lock()
		_, r, err := h.rl.Status(key)
		if err != nil {
			panic(err)
		}
		if int(math.Round(r))+1 > Rate {
			h.mu.Unlock()
			return false
		}
		err = h.lc.IncrementBy(key, window, 1)
		h.mu.Unlock()
		if err != nil {
			panic(err)
		}
		return true
	}
}

func (h *httprateInst) Close() {}

// --- throttled ---

type throttledInst struct{ rl *throttled.GCRARateLimiterCtx }

// newThrottled returns throttled's GCRA over its memstore, bounded to maxKeys
// with an LRU, or unbounded when maxKeys is 0.
func newThrottled(c Config, maxKeys int) *throttledInst {
	st, err := memstore.NewCtx(maxKeys)
	if err != nil {
		panic(err)
	}
	rl, err := throttled.NewGCRARateLimiterCtx(st, throttled.RateQuota{
		MaxRate:  throttled.PerDuration(Rate, c.Period),
		MaxBurst: Rate - 1, // throttled admits MaxBurst+1 at once
	})
	if err != nil {
		panic(err)
	}
	return &throttledInst{rl: rl}
}

func (t *throttledInst) Worker() func(string) bool {
	ctx := context.Background()
	return func(key string) bool {
		limited, _, err := t.rl.RateLimitCtx(ctx, key, 1)
		if err != nil {
			return false // CAS retries exhausted under contention: counted as refused
		}
		return !limited
	}
}

func (t *throttledInst) Close() {}
