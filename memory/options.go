package memory

import "time"

// An Option configures a Store.
type Option func(*options)

type options struct {
	clock         func() time.Time
	resolution    time.Duration
	maxKeys       int
	maxLimits     int
	shards        int
	sweepInterval time.Duration
	keepExpired   bool // see WithoutExpiryForTesting
}

func defaults() options {
	return options{resolution: time.Millisecond, maxKeys: 1 << 20, maxLimits: 1 << 14, shards: 256, sweepInterval: time.Minute}
}

// WithClock makes the store read the time from now, once per decision.
// Tests inject a fake clock; the store never reads time any other way.
// Such a clock may step back: the store decides at the time it reads (a
// time behind a state's counts as no time passed), and notes a Reset at
// the latest time it has read (see Store.Reset).
// Without it the store uses the wall time at New advanced by the monotonic
// clock, a time that never steps back when the system clock is set (window
// boundaries may then drift from the wall clock by what NTP slews,
// milliseconds a day), read as WithClockResolution says.
func WithClock(now func() time.Time) Option {
	return func(o *options) { o.clock = now }
}

// WithClockResolution sets how often the default clock's time is read for
// the decisions, one millisecond by default: a background goroutine reads
// it every d and decisions use that reading, one atomic load instead of a
// clock read each. The goroutine runs only
// while decisions come: after 64 ticks without one it stops, and the next
// decision reads the clock itself and starts it again. Close stops it.
//
// A decision's time so lags the exact time by up to d, plus however late
// the Go scheduler runs the goroutine: when the process waits for a CPU,
// so does the ticker (on a 2-core machine whose cores a server and its
// load generator kept busy, ticks came up to 8 ms apart; Stats reports
// late ticks and the largest lag). The store bounds what the lag can cost:
//   - A call that any check refuses at the lagging time is decided again
//     at the exact time: every refusal, with its RetryAfter, is the
//     exact clock's, so a time that stands still
//     never starves a limit.
//   - Only limits that refill at a steady rate (the buckets, GCRA and
//     concurrency) of at most one unit, or 1/256 of their burst, in d are
//     decided at the lagging time (10,000/s with a burst of 10,000 is;
//     100,000/s with a burst of 100 is not). Fixed windows, sliding
//     counters and sliding logs, which give a whole quota back at once,
//     never are. A call with any other check reads the exact time.
//   - An admission decided at the lagging time is exact for that time: a
//     limit may so admit, over any stretch of time, what it refills in the
//     lag beyond its limit (per d of lag, at most a unit or 1/256 of its
//     burst), a concurrency lease may expire up to the lag early, and a
//     queued leaky bucket's Delay may be up to the lag longer than needed.
//   - Concurrency leases taken while the time stands still between two
//     ticks are told apart by their stamps (Status.Lease): each is stamped
//     a µs after the newest its book holds, and the first taken after a
//     Reset at least a µs after the reset's time, which is no earlier than
//     any lease it forgot (see Store.Reset): giving back a lease, from
//     before the reset or since, never frees another.
//
// d ≤ 0 reads the clock for every decision (exact, and no goroutine); d
// below 100 µs is taken as 100 µs. It has no effect with WithClock.
func WithClockResolution(d time.Duration) Option {
	return func(o *options) { o.resolution = d }
}

// WithMaxKeys bounds what the store holds, in units, 1<<20 by default. A
// (key, limit) state counts as one unit, about 90 bytes for keys of one
// limit each (see the package doc). A sliding log's or a concurrency
// limit's state counts one more per 8 entries of room (rounded up) in the
// array its log lies in, 16 bytes an entry: the store moves a log that outgrows its array to one of
// twice its entries, and one cut to a quarter of its array to one of twice
// its entries (at least 8), so the room is one to four times the entries
// in the window. A log of one admission counts 2 units (about 240
// bytes), one of 100 from 14 to 51. So n bounds the store's memory
// whatever the algorithms of its limits: at most about 400 bytes a unit,
// 420 MB at the default. A shard's entries are all as wide as its widest
// key needs (a slot per fixed window, bucket or GCRA limit, two per
// sliding counter, up to six), at most about 40 bytes and 60 a slot,
// shared by the key's states: about 90 bytes a unit while a shard's keys
// hold one limit each, 65 to 90 while they hold a plan's, 90 to 160 for
// logs, and up to about 260 for keys of one limit beside keys of a plan
// of four slots, 400 beside one of six.
//
// When a new key arrives at a full store, or a log must grow past its
// room, an expired state (one back at full quota for a second or more:
// expiry is kept in whole seconds) is reclaimed or, failing that, a state
// is evicted by the rule of the package doc: never one that refuses (nor
// a lease book holding a lease in flight) while another may go, never one
// the call checks, and when every state the store looks at refuses, the
// check is refused (Stats.Evictions and
// Stats.NoRoom count them) and its call changes nothing. n < 1 means 1.
// The bound is kept per shard: n divided by the shard count, rounded down
// (with fewer shards when that would be below 16), so the store holds at
// most n units and, full, at least 15/16 of n — unless one call's states
// need more than a full shard holds beside them (a call never evicts the
// states it decides; its keys' other states may go): a call that inserts
// more new states than that, or a key whose log alone outgrows its shard's
// share (n/shards units: 32,768 entries of room at the default bound and
// 256 shards), holds them above the bound until the next new state or
// growing log of the shard evicts them, so a shard exceeds its share by
// one call's states at most. A key's length costs nothing: keys are
// hashed. The limits (ID and algorithm) the store has met are bounded
// apart: see WithMaxLimits.
func WithMaxKeys(n int) Option {
	return func(o *options) { o.maxKeys = max(n, 1) }
}

// WithMaxLimits bounds the number of distinct limits, by ID and algorithm
// (see sluice.Limit.WithID), that the store knows: 16,384 by default. The
// store keeps what it knows of a limit for as long as it lives, whether or
// not it still holds states of it, because its states are numbered by it:
// about 350 bytes for a limit decided under one set of parameters, and up
// to about 4 KB for one decided under 16 (see the package doc), so at most
// about 64 MB at the default bound.
//
// A policy's limits are a handful; limits whose IDs follow requests (an
// Envoy limit override names its window, which the caller chooses) are
// what an unbounded number of would come from. Once the store knows n
// limits, a call that checks any other is decided by none of its checks:
// Apply returns an error wrapping sluice.ErrStoreUnavailable, which the
// caller's store-error policy handles, and Stats.LimitsRefused counts it.
// The limits it knows are decided as before. n < 1 means 1; n above
// 2^31-1 means 2^31-1.
func WithMaxLimits(n int) Option {
	return func(o *options) { o.maxLimits = min(max(n, 1), maxLimits) }
}

// maxLimits is the most limits a store knows (see WithMaxLimits): a
// state's slot holds its limit's number in 31 bits.
const maxLimits = 1<<31 - 1

// WithShards sets the number of independently locked shards, rounded up to a
// power of two; 256 by default. More shards mean less contention between
// cores and a finer-grained key bound. n < 1 means 1, and n above
// maxShards (65,536) means maxShards.
func WithShards(n int) Option {
	return func(o *options) { o.shards = min(max(n, 1), maxShards) }
}

// maxShards is the most shards a store has (see WithShards).
const maxShards = 1 << 16

// WithoutExpiryForTesting makes the store's calls, refunds, releases and
// Resets read a state past its expiry as it stands, where the store reads
// it as absent: as the reference of a conformance test, which never
// forgets a state, reads it, and as the Redis store does under
// redis.WithTimeForTesting, whose keys live an hour of Redis's own clock
// whatever the test's. With WithSweepInterval(0), and room for every key,
// the store then forgets no state while a test clock (WithClock) leaps
// ahead, steps back, and meets a limit's ID under other parameters. Never
// use it in production.
func WithoutExpiryForTesting() Option {
	return func(o *options) { o.keepExpired = true }
}

// WithSweepInterval sets how often a background goroutine forgets expired
// states and gives their memory back, one minute by default. Zero or less
// disables it (call Sweep yourself; a full shard still reclaims expired
// states on demand). Close stops the goroutine.
func WithSweepInterval(d time.Duration) Option {
	return func(o *options) { o.sweepInterval = d }
}
