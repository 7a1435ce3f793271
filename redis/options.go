package redis

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/rueidis"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/overlimit"
)

// DefaultTimeout, 50 ms, bounds one Apply (all its round trips) and a new
// connection's HELLO unless WithTimeout or Options.Timeout says otherwise.
// It is the server's default store.redis.timeout. A rate limiter must
// answer faster than the request it guards; past this, the store reports
// sluice.ErrStoreUnavailable and the caller's store-error rule
// (Options.OnStoreError, for Open) decides. It suits a Redis up to about
// 20 ms away (round trip), over TLS or not (see Options.Timeout).
const DefaultTimeout = 50 * time.Millisecond

// SentinelRefresh, 5 s, is how often a store in sentinel mode asks the
// Sentinels which server is the primary, besides following their
// +switch-master events: a store that missed the event of a failover (its
// Sentinel connection was down at that moment) moves to the new primary
// within this time instead of staying on the old one.
const SentinelRefresh = 5 * time.Second

// An Option configures a Store.
type Option func(*options)

type options struct {
	timeout     time.Duration
	now         func() time.Time
	batchRuns   int
	replicas    int
	replicaWait time.Duration
}

// WithBatching sets how many apply scripts the store keeps in flight at
// once on a standalone or Sentinel server, DefaultBatchRuns by default.
// While that many are in flight, further calls wait and are sent together,
// as one script run, as soon as one of them returns: under load Redis then
// pays its per-command and per-script costs once per batch rather than
// once per call.
// A call never waits while fewer runs are in flight, so a lightly loaded
// store answers as fast as without batching. Each call of a batch is still
// decided atomically and all-or-nothing, exactly as if it had been sent
// alone at that instant; a call whose context ends before its batch is
// sent consumes nothing. A caller's context bounds its own call, never the
// others of its batch: a run of several calls ends by the earliest of
// their Timeouts (see WithTimeout), and a call whose context ends while
// such a run is in flight returns when the run ends, within its Timeout.
// Zero or less sends every call on its own. On a Cluster, where one script
// can only touch one slot, calls are never batched.
func WithBatching(runs int) Option {
	return func(o *options) { o.batchRuns = runs }
}

// WithTimeout bounds every Apply to d, DefaultTimeout by default; the
// caller's context may end it earlier. Zero or less leaves only the
// caller's context.
func WithTimeout(d time.Duration) Option {
	return func(o *options) { o.timeout = d }
}

// WithTimeForTesting makes the scripts decide at now() instead of Redis's
// TIME, so that tests can compare the store with sluice.Limit.Decide at the
// same instants. Redis still expires keys on its own clock, which does not
// follow now: keys written under this option live at least an hour, so
// that a test clock moving faster or slower than Redis's never loses state
// the reference keeps. Never use it in production.
func WithTimeForTesting(now func() time.Time) Option {
	return func(o *options) { o.now = now }
}

// testTTL is the least TTL of keys written under WithTimeForTesting.
const testTTL = time.Hour

// Mode is the kind of Redis deployment Options connects to.
type Mode string

// The deployments.
const (
	// ModeStandalone is one Redis server (or a primary with replicas that
	// the store does not use).
	ModeStandalone Mode = "standalone"
	// ModeSentinel finds the primary of Options.MasterSet through the
	// Sentinels at Options.Addrs and follows failovers: at once on the
	// Sentinels' +switch-master event, and within SentinelRefresh when the
	// event was missed (the client asks the Sentinels that often).
	ModeSentinel Mode = "sentinel"
	// ModeCluster is a Redis Cluster; Options.Addrs are some of its nodes.
	ModeCluster Mode = "cluster"
)

// Options describes how to reach Redis and, for Open, what to do while it
// cannot be reached. Open turns it into the store a service runs; NewClient
// into a rueidis client; Dial into a bare Store. The zero Options is a
// standalone server at 127.0.0.1:6379, a 50 ms timeout and, for Open, the
// local fallback for one instance.
type Options struct {
	// Mode is standalone (the default when empty), sentinel or cluster.
	Mode Mode
	// Addrs are "host:port" addresses: the server, the Sentinels, or seed
	// nodes of the cluster. Default: 127.0.0.1:6379.
	Addrs []string
	// MasterSet is the Sentinel master set name (sentinel mode only).
	MasterSet string
	// Username and Password authenticate to Redis (ACL user or
	// requirepass); with Sentinel, to the Sentinels as well unless
	// SentinelUsername or SentinelPassword is set.
	Username, Password string
	// SentinelUsername and SentinelPassword, when either is set,
	// authenticate to the Sentinels (sentinel mode only: a Sentinel's own
	// requirepass or ACL user) in place of Username and Password, which
	// then authenticate to the Redis servers alone.
	SentinelUsername, SentinelPassword string
	// Credentials, when not nil, is called for each new connection and
	// its user name and password are sent instead of Username and
	// Password, so that a rotated password is used from the next
	// connection on (at start, and whenever a dropped connection is made
	// again) without a restart: to the Redis servers, and to the Sentinels
	// unless SentinelUsername or SentinelPassword is set. An error fails
	// that connection as a wrong password would. It must be safe for
	// concurrent use.
	Credentials func() (username, password string, err error)
	// DB selects a database (standalone and sentinel; a cluster has only 0).
	DB int
	// TLS enables TLS with this configuration when not nil.
	TLS *tls.Config
	// TLSRoots, when not nil with TLS, is called for each new connection
	// (to a server or a Sentinel), and the pool it returns verifies the
	// server's certificate in place of TLS.RootCAs: a CA rotated on disk is
	// trusted from the next connection on, without a restart. An error
	// fails that connection.
	TLSRoots func() (*x509.CertPool, error)
	// Timeout bounds, for Open and Dial, every Apply (all its round
	// trips), and for every client from these Options a new connection's
	// HELLO and how long a call waits for its TCP connect and TLS handshake;
	// DefaultTimeout (50 ms) when zero. When negative, Apply is bounded by
	// the caller's context alone and the rest by DefaultTimeout. A call
	// that finds its connection dropped starts a new one whose TCP connect
	// and TLS handshake go on in the background past the call's deadline
	// (for up to 5 s), and the next call finds it made (it is kept for up
	// to 10 s, also when made before the call's deadline but with less
	// time left than it took) and spends only HELLO, then its own round
	// trip (two after Redis lost its scripts, say on a restart). Every
	// call to a node waits for the new connection to it that another call
	// is making (rueidis makes one at a time), whatever its own deadline:
	// one made by a call with more time than Timeout (Open's watch, which
	// reads with 100 ms; a Ping under a longer context) may hold it up to
	// about a Timeout past its own. A new connection on which Redis has not
	// answered by the deadline of the call it was handed to (a Timeout
	// after, for a call with more time) is closed then: a call that a
	// loaded machine did not run until past its deadline sends no HELLO,
	// and rueidis would hold it, and the calls waiting for the connection,
	// until a stalled Redis answered or a second had passed. The calls
	// waiting for a connection that the call making it gave up on (its
	// deadline came first) are sent again, each within its own deadline:
	// a caller with a short deadline fails no call but its own. A call that times out
	// leaves its connection to the next; one that answers nothing, not
	// even a PING, for about a second plus Timeout is dropped. Timeout
	// must therefore exceed a round trip to Redis plus Redis's own time,
	// whatever the handshakes cost: the call that makes a new connection
	// spends two round trips, and fails when Timeout holds only one, the
	// next call deciding. Under load on a standalone server or Sentinel a
	// call may first wait for the batch run ahead of it (see Batching), and
	// one left with less than a quarter of Timeout is failed unsent: there
	// Timeout should hold two round trips. The default suits a Redis up to
	// about 20 ms away (round trip), over TLS or not. An attempt of Open's to connect that
	// times out is logged with the timeout and what it bounds. See the
	// package documentation (Failover) for how Timeout compares with the
	// time Redis takes to fail over.
	Timeout time.Duration
	// Replicas and ReplicaWait, for Open and Dial on a standalone server
	// or Sentinel: when Replicas > 0, every write waits until that many
	// replicas hold it, at most ReplicaWait (see WithReplicas), so that a
	// failover cannot forget a decision: a write not copied in time is an
	// error, decided by OnStoreError.
	Replicas    int
	ReplicaWait time.Duration

	// The fields below are Open's; NewClient and Dial ignore them.

	// OnStoreError is what Open's store does with a call Redis cannot
	// decide (Redis down, not reachable yet, slower than Timeout, or kept
	// away by the circuit breaker): failover.Local, the zero value, decides
	// on Local with each limit divided by Instances; failover.Allow admits
	// every check; failover.Deny refuses every check. See failover.Store.
	OnStoreError failover.OnError
	// Instances is how many processes share this Redis's quotas; under
	// failover.Local each decides on its share of every limit. Values
	// below 1 mean 1.
	Instances int
	// Local is the store failover.Local decides on, and stays the caller's
	// to close. When nil, Open makes a memory.New() of its own, which the
	// returned store's Close closes.
	Local *memory.Store
	// Breaker configures the circuit breaker in front of Redis; the zero
	// value means failover's defaults (5 consecutive failures open it, a
	// probe goes through every 500 ms). An OnStateChange set here is
	// called after Open's own log line.
	Breaker failover.BreakerOptions
	// OverLimit configures the cache of refusals in front of Redis; the
	// zero value means overlimit's defaults.
	OverLimit overlimit.Options
	// Lease leases quota of the limits it names (or of every leasable
	// limit, with Mode LeaseAuto) so that most of their checks are decided
	// in memory (see Leased and the package documentation, Leased quota).
	// The zero value leases nothing. Every instance sharing the Redis must
	// lease the same limits: a bucket is leased with a smaller shared
	// burst, and an instance deciding it with the whole burst could spend
	// what the others' leases hold back.
	Lease LeaseOptions
	// MustConnect makes Open fail, with an error wrapping
	// sluice.ErrStoreUnavailable, when its first attempt cannot reach
	// Redis, instead of returning a store that decides by OnStoreError
	// until Redis can be reached.
	MustConnect bool
	// Logger, when not nil, is told when the store starts without Redis,
	// when it connects, and when its circuit breaker opens and closes (a
	// line per event, never per decision). Nil logs nothing.
	Logger *slog.Logger
}

// applyTimeout is the bound on one Apply that o.Timeout asks for: 0 for
// none.
func (o Options) applyTimeout() time.Duration {
	switch {
	case o.Timeout == 0:
		return DefaultTimeout
	case o.Timeout < 0:
		return 0
	}
	return o.Timeout
}

// storeOptions are the Options a Store made from o starts with.
func (o Options) storeOptions() []Option {
	return []Option{WithTimeout(o.applyTimeout()), WithReplicas(o.Replicas, o.ReplicaWait)}
}

// ClientOption returns the rueidis configuration for o. Client-side caching
// is off: the store's scripts read and write in one step and gain nothing
// from it. Its DialCtxFn makes each connection's TCP connect and TLS
// handshake in the background (see Options.Timeout) and closes a
// connection on which Redis has not answered by its caller's deadline; the
// connections it returns are neither *net.TCPConn nor *tls.Conn, so that
// DisableTCPNoDelay has no effect. A client's Close does not end the
// background handshakes, rueidis telling a dial function nothing of it: after
// the Close of a client made from this configuration with
// rueidis.NewClient, a dial under way goes on, on a goroutine of its own,
// for up to 5 s, and a connection made after its caller gave up stays
// open, unused, for up to 10 s more; then nothing of them is left. A
// service whose Close must leave no goroutine and no connection (a leak
// check, a shutdown that waits for Redis's clients to go) uses NewClient,
// whose client ends them in its Close. Every client made from one
// returned configuration shares its dials.
func (o Options) ClientOption() (rueidis.ClientOption, error) {
	co, _, err := o.clientOption()
	return co, err
}

// clientOption is ClientOption with the connector its DialCtxFn belongs
// to, which the caller closes once done with every client made from it.
func (o Options) clientOption() (rueidis.ClientOption, *connector, error) {
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	addrs := o.Addrs
	if len(addrs) == 0 {
		addrs = []string{"127.0.0.1:6379"}
	}
	co := rueidis.ClientOption{
		InitAddress:      addrs,
		Username:         o.Username,
		Password:         o.Password,
		TLSConfig:        o.TLS,
		SelectDB:         o.DB,
		DisableCache:     true,
		ConnWriteTimeout: timeout,
		AlwaysPipelining: true,
	}
	co.Dialer.Timeout = timeout
	if o.Mode != ModeSentinel && (o.SentinelUsername != "" || o.SentinelPassword != "") {
		return co, nil, errors.New("redis: SentinelUsername and SentinelPassword are for sentinel mode")
	}
	switch o.Mode {
	case "", ModeStandalone:
		co.ForceSingleClient = true
	case ModeSentinel:
		if o.MasterSet == "" {
			return co, nil, errors.New("redis: sentinel mode needs a master set name")
		}
		user, password := o.Username, o.Password
		if o.SentinelUsername != "" || o.SentinelPassword != "" {
			user, password = o.SentinelUsername, o.SentinelPassword
		}
		co.Sentinel = rueidis.SentinelOption{MasterSet: o.MasterSet, Username: user,
			Password: password, TLSConfig: o.TLS, Dialer: co.Dialer, TopologyRefreshInterval: SentinelRefresh}
	case ModeCluster:
		if o.DB != 0 {
			return co, nil, fmt.Errorf("redis: a cluster has only database 0, not %d", o.DB)
		}
		co.ShuffleInit = true
	default:
		return co, nil, fmt.Errorf("redis: unknown mode %q (use standalone, sentinel or cluster)", o.Mode)
	}
	if o.Credentials != nil {
		co.AuthCredentialsFn = o.authCredentials(&co.Sentinel)
	}
	dial := plainDial
	if o.TLS != nil && o.TLSRoots != nil {
		dial = dialWithRoots(o.TLSRoots)
	}
	dials := newConnector(dial)
	co.DialCtxFn = dials.DialCtx
	return co, dials, nil
}

// NewClient connects to Redis as o describes; it fails when Redis cannot be
// reached now, with an error wrapping sluice.ErrStoreUnavailable. In cluster
// mode it fails if the addresses are not a Redis Cluster. The caller closes
// the client: its Close closes its connections and, when it returns, no
// connection is being made for it, even in the background, and none is
// kept for later. NewClient leaves none either when it fails.
func NewClient(o Options) (rueidis.Client, error) {
	co, dials, err := o.clientOption()
	if err != nil {
		return nil, err
	}
	c, err := connect(o.Mode, co, dials)
	if err != nil {
		dials.close()
		return nil, err
	}
	return &dialingClient{Client: c, dials: dials}, nil
}

// connect is newClient, tried once more at once when the first attempt
// failed with a connection made by dials and kept: its dial ended too
// late for HELLO within the first attempt's Timeout (a TLS handshake and
// HELLO that fit one Timeout each, not both), and the second attempt spends
// only HELLO.
func connect(mode Mode, co rueidis.ClientOption, dials *connector) (rueidis.Client, error) {
	c, err := newClient(mode, co)
	if err != nil && dials.keeps() {
		c, err = newClient(mode, co)
	}
	return c, err
}

// dialingClient is a rueidis client that owns the connector it dials
// with, and ends it when it closes.
type dialingClient struct {
	rueidis.Client
	dials *connector
}

// Close closes the client, then its connector.
func (c *dialingClient) Close() {
	c.Client.Close()
	c.dials.close()
}

// newClient is NewClient after the options were checked.
func newClient(mode Mode, co rueidis.ClientOption) (rueidis.Client, error) {
	c, err := rueidis.NewClient(co)
	if err != nil {
		if c != nil { // a single client comes back with its failed dial
			c.Close()
		}
		return nil, fmt.Errorf("redis: %w: connecting to %v: %w", sluice.ErrStoreUnavailable, co.InitAddress, err)
	}
	if mode == ModeCluster && c.Mode() != rueidis.ClientModeCluster {
		c.Close()
		return nil, fmt.Errorf("redis: %v is not a Redis Cluster (use mode standalone)", co.InitAddress)
	}
	return c, nil
}

// Dial connects to Redis as o describes and returns a Store that owns the
// connection: Close closes it. Apply is bounded by o.Timeout unless opts
// say otherwise. Dial fails when Redis cannot be reached now, with an error
// wrapping sluice.ErrStoreUnavailable; Open instead returns a store that
// starts without Redis and connects when it can.
func Dial(o Options, opts ...Option) (*Store, error) {
	c, err := NewClient(o)
	if err != nil {
		return nil, err
	}
	s := New(c, append(o.storeOptions(), opts...)...)
	s.owned = true
	return s, nil
}
