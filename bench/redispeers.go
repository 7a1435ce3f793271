package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/go-redis/redis_rate/v10"
	goredis "github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/throttled/throttled/v2"
	"github.com/throttled/throttled/v2/store/goredisstore.v9"
	ulule "github.com/ulule/limiter/v3"
	ulredis "github.com/ulule/limiter/v3/drivers/store/redis"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/overlimit"
	sluiceredis "github.com/sluice-dev/sluice/redis"
)

// RedisWorkers is the number of goroutines every Redis benchmark runs: one
// process, many concurrent callers, as a busy service would be.
const RedisWorkers = 64

// RedisKeys is the number of distinct keys the Redis benchmarks walk.
const RedisKeys = 10_000

// ServerStoreTimeout is the server's default Redis timeout (config's
// store.redis.timeout), used by the "as the server runs it" peer.
const ServerStoreTimeout = 50 * time.Millisecond

// A RedisPeer is one Redis-backed limiter under test. Every peer enforces
// Rate per second with a burst of Rate on every key, so no call is refused
// and every peer measures its "existing key, admitted" path.
type RedisPeer struct {
	Name string
	Lib  string
	// New connects to the Redis at addr, for a limit of rate per second
	// with a burst of rate (the benchmarks pass Rate). Keys of different
	// peers never collide (each library prefixes its own).
	New func(addr string, rate int) (RedisInstance, error)
}

// A RedisInstance is one limiter connected to Redis.
type RedisInstance interface {
	// Worker returns a decision function for one goroutine: one unit for
	// key; an error is a failed decision.
	Worker() func(key string) (bool, error)
	// Check reports a problem seen since the last Check (e.g. fallback
	// decisions), "" when none.
	Check() string
	Close()
}

// goredisPool is the connection pool of the go-redis based peers: one
// connection per goroutine, the best case for a client that sends one
// command per connection at a time (go-redis's default is 10 per CPU, 20
// here).
const goredisPool = RedisWorkers

// RedisPeers lists the Redis limiters, sluice first.
var RedisPeers = []RedisPeer{
	{"sluice-redis", "sluice redis.New(redis.NewClient(...)) + Limiter.Allow, GCRA (rueidis, auto-pipelined)",
		func(addr string, rate int) (RedisInstance, error) { return newSluiceRedis(addr, rate, false) }},
	{"sluice-redis-server", "the same inside overlimit.New + failover.New (local memory fallback, 50 ms timeout), as `sluice serve` runs it",
		func(addr string, rate int) (RedisInstance, error) { return newSluiceRedis(addr, rate, true) }},
	{"redis_rate", "github.com/go-redis/redis_rate/v10 v10.0.1 (GCRA) on go-redis v9.23.0, pool 64",
		func(addr string, rate int) (RedisInstance, error) { return newRedisRate(addr, rate) }},
	{"ulule-redis", "github.com/ulule/limiter/v3 v3.11.2 drivers/store/redis (fixed window, INCRBY script) on go-redis, pool 64",
		func(addr string, rate int) (RedisInstance, error) { return newUluleRedis(addr, rate) }},
	{"throttled-redis", "github.com/throttled/throttled/v2 v2.15.0 GCRA + store/goredisstore.v9 on go-redis, pool 64",
		func(addr string, rate int) (RedisInstance, error) { return newThrottledRedis(addr, rate) }},
}

// --- sluice ---

type sluiceRedis struct {
	client rueidis.Client
	lim    *sluice.Limiter
	limit  sluice.Limit
	fo     *failover.Store
	seen   failover.Stats // at the last Check
	local  *memory.Store
}

// newSluiceRedis connects sluice's Redis store; wrapped, it is built as
// server/store_redis.go builds it: an over-limit cache right around Redis,
// inside a failover to a local memory store.
func newSluiceRedis(addr string, rate int, wrapped bool) (*sluiceRedis, error) {
	client, err := sluiceredis.NewClient(sluiceredis.Options{Addrs: []string{addr}})
	if err != nil {
		return nil, err
	}
	s := &sluiceRedis{client: client, limit: sluice.GCRA(int64(rate), time.Second)}
	if !wrapped {
		s.lim = sluice.NewLimiter(sluiceredis.New(client))
		return s, nil
	}
	primary := sluiceredis.New(client, sluiceredis.WithTimeout(ServerStoreTimeout))
	cache := overlimit.New(primary, overlimit.Options{})
	s.local = memory.New(memory.WithMaxKeys(1_000_000))
	// As server/store_redis.go: the Redis store bounds each call, the
	// failover sets no deadline of its own.
	s.fo, err = failover.New(cache, s.local, failover.Options{OnError: failover.Local,
		Timeout: -1, Instances: 1})
	if err != nil {
		client.Close()
		return nil, err
	}
	s.lim = sluice.NewLimiter(s.fo)
	return s, nil
}

func (s *sluiceRedis) Worker() func(string) (bool, error) {
	ctx := context.Background()
	var d sluice.Decision
	checks := []sluice.Check{{Limit: s.limit, Cost: 1}}
	return func(key string) (bool, error) {
		checks[0].Key = key
		err := s.lim.Allow(ctx, checks, &d)
		return d.Allowed, err
	}
}

func (s *sluiceRedis) Check() string {
	if s.fo == nil {
		return ""
	}
	st := s.fo.Stats()
	errs, local := st.StoreErrors-s.seen.StoreErrors, st.FallbackDecisions-s.seen.FallbackDecisions
	s.seen = st
	if errs > 0 || local > 0 {
		return fmt.Sprintf("%d store errors, %d decisions by the local fallback (not Redis)", errs, local)
	}
	return ""
}

func (s *sluiceRedis) Close() {
	if s.local != nil {
		s.local.Close()
	}
	s.client.Close()
}

// --- go-redis/redis_rate ---

type redisRate struct {
	client *goredis.Client
	lim    *redis_rate.Limiter
	limit  redis_rate.Limit
}

func newRedisRate(addr string, rate int) (*redisRate, error) {
	c := goredis.NewClient(&goredis.Options{Addr: addr, PoolSize: goredisPool})
	return &redisRate{client: c, lim: redis_rate.NewLimiter(c),
		limit: redis_rate.Limit{Rate: rate, Burst: rate, Period: time.Second}}, nil
}

func (r *redisRate) Worker() func(string) (bool, error) {
	ctx := context.Background()
	return func(key string) (bool, error) {
		res, err := r.lim.Allow(ctx, key, r.limit)
		if err != nil {
			return false, err
		}
		return res.Allowed > 0, nil
	}
}

func (r *redisRate) Check() string { return "" }
func (r *redisRate) Close()        { r.client.Close() }

// --- ulule/limiter ---

type ululeRedis struct {
	client *goredis.Client
	lim    *ulule.Limiter
}

func newUluleRedis(addr string, rate int) (*ululeRedis, error) {
	c := goredis.NewClient(&goredis.Options{Addr: addr, PoolSize: goredisPool})
	st, err := ulredis.NewStore(c)
	if err != nil {
		c.Close()
		return nil, err
	}
	return &ululeRedis{client: c, lim: ulule.New(st, ulule.Rate{Period: time.Second, Limit: int64(rate)})}, nil
}

func (u *ululeRedis) Worker() func(string) (bool, error) {
	ctx := context.Background()
	return func(key string) (bool, error) {
		c, err := u.lim.Get(ctx, key)
		if err != nil {
			return false, err
		}
		return !c.Reached, nil
	}
}

func (u *ululeRedis) Check() string { return "" }
func (u *ululeRedis) Close()        { u.client.Close() }

// --- throttled ---

type throttledRedis struct {
	client *goredis.Client
	rl     *throttled.GCRARateLimiterCtx
}

func newThrottledRedis(addr string, rate int) (*throttledRedis, error) {
	c := goredis.NewClient(&goredis.Options{Addr: addr, PoolSize: goredisPool})
	st, err := goredisstore.NewCtx(c, "throttled:")
	if err != nil {
		c.Close()
		return nil, err
	}
	rl, err := throttled.NewGCRARateLimiterCtx(st, throttled.RateQuota{
		MaxRate:  throttled.PerDuration(rate, time.Second),
		MaxBurst: rate - 1, // throttled admits MaxBurst+1 at once
	})
	if err != nil {
		c.Close()
		return nil, err
	}
	return &throttledRedis{client: c, rl: rl}, nil
}

func (t *throttledRedis) Worker() func(string) (bool, error) {
	ctx := context.Background()
	return func(key string) (bool, error) {
		limited, _, err := t.rl.RateLimitCtx(ctx, key, 1)
		if err != nil {
			return false, err
		}
		return !limited, nil
	}
}

func (t *throttledRedis) Check() string { return "" }
func (t *throttledRedis) Close()        { t.client.Close() }
