// Package config loads sluice's YAML configuration: the options of the HTTP
// middleware (Config.HTTPLimitOptions) and of the Envoy rate limit service
// (Config.EnvoyOptions), and the server's own settings. Loading is strict:
// unknown fields, wrong types, bad durations, zero or negative quantities,
// unknown algorithms and duplicate names are errors, and the options are
// judged by the Validate methods that httplimit.New and envoy.NewService
// run; every problem names the file, line, column and field path.
// examples/sluice.yaml is the living reference of the format.
package config

import (
	"net/netip"
	"time"

	"github.com/sluice-dev/sluice/httplimit"
)

// Config is a loaded, validated configuration.
type Config struct {
	// File is the path the configuration was read from.
	File string
	// Read maps each file the configuration was read from (File as Load
	// read it, and KeysFile), by its cleaned path, to the SHA-256 of the
	// bytes read: what the configuration is made of, which the files may
	// no longer hold. Parse records the keys file only.
	Read map[string][32]byte
	// Listen is the public listener's address, ":8080" by default: the
	// reverse proxy, DocsPath and HealthPath, nothing else of sluice's. It
	// speaks HTTP/1.1 and HTTP/2 (by ALPN with TLS, by prior knowledge
	// without, as gRPC clients do).
	Listen string
	// DocsPath is where the public listener serves the client
	// documentation, "/docs" by default, and HealthPath its liveness
	// check, "/healthz" by default: GET only, never limited, never
	// proxied. "" hands the path to the upstream (through the limiter, as
	// any other), for an API that has its own. The admin listener serves
	// both at /docs and /healthz whatever these say.
	DocsPath, HealthPath string
	// TLS, when set, makes the public listener speak HTTPS.
	TLS TLS
	// ProxyProtocol lists the load balancers whose connections to the
	// public listener start with a PROXY protocol header (version 1 or 2),
	// as an L4 load balancer's do (AWS NLB, HAProxy in TCP mode): each of
	// their connections must send one, and the client it names is the
	// connection's peer, which identity.trusted_proxies then judges as it
	// would a direct client. A header from any other peer is never read
	// (the request is malformed: 400). Empty: no connection is read for a
	// header. Whether it is empty is fixed at start; the list follows
	// reloads.
	ProxyProtocol []netip.Prefix
	// Admin is the private listener and who may call it.
	Admin Admin
	// Connections bounds every listener's connections and request times.
	Connections Connections
	// Designer bounds the designer's simulations.
	Designer Designer
	// Shutdown is how the server stops on SIGTERM.
	Shutdown Shutdown
	// Notify is the webhook told of quotas used (notify:); URL "" for none.
	Notify Notify
	// Settle configures the decision API's settlement ids.
	Settle Settle
	// Log says what the server logs of its decisions.
	Log Log
	// Upstream is the URL the server proxies admitted requests to; empty
	// when sluice runs only as a decision service. Its scheme is http,
	// https (HTTP/2 when the upstream offers it), or h2c: HTTP/2 without
	// TLS for every request, as a gRPC server speaks it. A path prefixes
	// every request's; a query is refused (it would be added to every
	// request's own).
	Upstream string
	// PreserveHost sends the upstream the Host the client asked for, as
	// Caddy, Traefik and Envoy do, for an upstream that routes or checks
	// by host (an ingress, a multi-tenant API, Django's ALLOWED_HOSTS);
	// false (the default, as nginx's proxy_pass) sends the upstream URL's
	// host. The client's host is in X-Forwarded-Host either way.
	PreserveHost bool
	// UpstreamTLS configures TLS to an https:// upstream: the CA that signs
	// its certificate (default: the system's roots), a client certificate
	// when it asks for one, the name its certificate bears. Its files are
	// read again on every reload.
	UpstreamTLS ClientTLS
	Store       Store
	Identity    Identity
	// Policy holds the plans and global limits.
	Policy *httplimit.Policy
	// Keys maps the SHA-256 of an API key to its entry: those of keys:
	// and of KeysFile. Keys are never configured in clear text.
	Keys map[[32]byte]*Key
	// KeysFile, when not empty, names a file of more API keys: a YAML list
	// of entries as keys: holds them (name, sha256, plan, limits), at most
	// 4 MiB, read with the configuration (and again at every reload; the
	// server watches it as it watches the configuration).
	KeysFile string
	// Rules limit the requests they match by keys and limits of their own
	// (see httplimit.Rule), in the order of the file.
	Rules []httplimit.Rule
	// Count maps the limits (and rules) that say count: to it: which
	// admitted requests they count, by the answer's status (see
	// httplimit.Options.Count).
	Count map[string]string
	// counts are the count: settings read, where they were read (see
	// CountsLeasedBy).
	counts []countAt
	// notified are the limits notify names that Redis may lease, where
	// notify names them (see NotifiedLeasedBy).
	notified []countAt
	// Penalty is the penalty box: after Refusals refusals within Within, a
	// client is refused for For (see httplimit.Penalty); zero without a
	// penalty section.
	Penalty httplimit.Penalty
	// Exempt lists ServeMux patterns ("GET /healthz") that no limit applies to.
	Exempt []string
	// ExemptAddresses, ExemptKeys (names of keys) and ExemptUsers are the
	// clients no limit applies to (see httplimit.Options).
	ExemptAddresses []netip.Prefix
	ExemptKeys      []string
	ExemptUsers     []string
	// ExemptPlans are names of plans whose clients are exempt.
	ExemptPlans []string
	Response    Response
	// Degradation is the overload behaviour; Enabled is false without a
	// degradation section.
	Degradation Degradation
	// Envoy is the Envoy rate limit service; Enabled is false without an
	// envoy section.
	Envoy Envoy
}

// Store selects and configures the store.
type Store struct {
	// Type is "memory" (default) or "redis".
	Type string
	// MaxKeys bounds the memory store (and the local fallback of a Redis
	// store), 1,000,000 by default.
	MaxKeys int
	Redis   Redis
}

// Redis configures the Redis store.
type Redis struct {
	Mode       string   // "standalone" (default), "sentinel" or "cluster"
	Addresses  []string // host:port of the server (one alone), the sentinels or cluster seeds
	MasterName string   // the Sentinel master set
	// Username and Password authenticate to Redis (an ACL user, or the
	// default user's requirepass) and, unless the Sentinel fields say
	// otherwise, to the Sentinels.
	Username string
	Password string
	// PasswordFile, instead of Password, names a file holding the password
	// (see ReadSecret), so that the configuration holds no secret. It is
	// read again for every new connection to a Redis server: a rotated
	// password is used from the next connection on, without a restart
	// (to the Sentinels too, unless they have credentials of their own).
	PasswordFile string
	// SentinelUsername and SentinelPassword (or SentinelPasswordFile, read
	// at start) authenticate to the Sentinels when they have a password of
	// their own (sentinel mode only); Username and the password then
	// authenticate to the Redis servers alone.
	SentinelUsername     string
	SentinelPassword     string
	SentinelPasswordFile string
	DB                   int
	// TLS configures TLS to Redis; off by default.
	TLS ClientTLS
	// Timeout bounds each decision's round trips, 50ms by default, and a
	// new connection's HELLO; a new connection's TCP connect and TLS
	// handshake go on in the background past it. It must exceed one round
	// trip to Redis plus Redis's own time (the call that reconnects spends
	// two): the default suits a Redis up to about 20 ms away (see
	// redis.Options.Timeout).
	Timeout time.Duration
	// OnStoreError is "local" (default: decide in memory with each limit
	// divided by Instances), "allow" or "deny".
	OnStoreError string
	// Instances is how many sluice instances share the Redis store, 1 by
	// default; the local fallback divides quotas by it.
	Instances int
	// Replicas, when above 0 (standalone or Sentinel), makes every write
	// wait until that many replicas hold it, at most ReplicaWait (0:
	// redis.DefaultReplicaWait, 20ms), a whole number of milliseconds
	// (WAIT's unit), which Load refuses unless it is below Timeout, the
	// bound of the write's whole round trip, written or left out: a write no
	// replica has copied in time is a store error, decided by
	// OnStoreError, so that a failover cannot forget a decision
	// (redis.Options.Replicas; it costs decisions/s, see RELIABILITY.md).
	Replicas    int
	ReplicaWait time.Duration
	// Lease is every limit's lease mode unless its own lease: says
	// otherwise: "off" (the default: every check is a round trip) or
	// "auto" (redis.LeaseAuto: decide most checks of the limits that can
	// be leased in memory, from quota leased from Redis).
	Lease string
	// Leases maps the ID of each limit that sets lease: to its mode, as the
	// store decides it: a rule's limit as "<rule>.<id>".
	Leases map[string]string
	// LeaseMaxUnits caps one lease (0: redis.DefaultLeaseMaxUnits);
	// LeaseMaxAge caps its life (0: redis.DefaultLeaseMaxAge), at least
	// 1ms in a file. Load refuses either where nothing is leased (no
	// lease: auto, here or on a limit).
	LeaseMaxUnits int64
	LeaseMaxAge   time.Duration
}

// Identity says how a request's client is recognised: the identity fields
// of httplimit.Options, which document them. Load fills in their defaults
// (httplimit.Options.WithDefaults); in a Config built in Go, empty fields
// are the middleware's defaults all the same.
type Identity struct {
	// APIKeyHeaders are read in order; "Authorization" is read as a Bearer
	// token. Empty: Authorization, X-API-Key.
	APIKeyHeaders []string
	// UserHeader carries a user id set by a trusted auth layer (believed
	// only from TrustedProxies); empty disables it.
	UserHeader string
	// PlanHeader carries a plan name set by a trusted auth layer (believed
	// only from TrustedProxies); empty disables it.
	PlanHeader string
	// TrustedProxies are the peers whose forwarding and identity headers
	// are believed. Empty: none are. A front proxy must strip or overwrite
	// the user and plan headers a client sends (see examples/nginx).
	TrustedProxies []netip.Prefix
	// TrustUnixPeers makes the peers of a Unix-domain socket trusted
	// proxies (httplimit.Options.TrustUnixPeers): in YAML, a "unix:" entry
	// of trusted_proxies, as nginx's set_real_ip_from writes it. sluice
	// serve listens on TCP only, so it matters to a program that serves the
	// middleware of HTTPLimitOptions on a Unix socket.
	TrustUnixPeers bool
	// ForwardedHeader is the one forwarding header believed from trusted
	// proxies: "x-forwarded-for" (when empty) or "forwarded" (RFC 7239).
	// Only the header the proxies maintain is safe: the other one arrives
	// as the client wrote it.
	ForwardedHeader string
	// IPv4Prefix and IPv6Prefix group client addresses: 32 and 64 when zero
	// (one IPv6 /64 is one client).
	IPv4Prefix, IPv6Prefix int
	// UnknownKeys says how to limit an API key that is not in Keys: "ip"
	// (the default when empty: as a request without a key, by its address
	// on the anonymous plan unless a token or user header names it, so
	// that made-up keys mint no quota, whether or not any key is listed)
	// or "key" (by the key's hash, on the default plan: each made-up key
	// a client of its own, for a deployment whose keys an authentication
	// layer in front verifies, refusing a key it does not know). Load sets
	// it, "ip" or "key".
	UnknownKeys string
	// TokenHeaders are the headers that carry tokens for JWT, read in
	// order ("Authorization" as a Bearer token). Empty: Authorization.
	TokenHeaders []string
	// JWT, when set, are the issuers whose bearer tokens name clients,
	// each verified by its own keys: a verified token's client is the user
	// it names (see httplimit.Options.Tokens). Empty: bearer tokens are
	// API keys.
	JWT []*JWT
}

// Key is one configured API key.
type Key struct {
	Name string   // a label for docs and logs, never the key itself
	Hash [32]byte // SHA-256 of the key
	// Plan is the key's plan with the key's overrides applied.
	Plan *httplimit.Plan
}

// Response configures what clients see.
type Response struct {
	// Headers lists the RateLimit header modes sent on every response:
	// "ietf" (draft-ietf-httpapi-ratelimit-headers-11; alone when empty),
	// "draft-7", "draft-6", "legacy" (X-RateLimit-*).
	Headers []string
	// DocsURL is linked from 429 bodies as "documentation".
	DocsURL string
	// Template is the JSON body of refusals in place of the RFC 9457
	// problem (httplimit.Options.RefusalTemplate): response.template as
	// written, or the preset of response.body (error-code:
	// httplimit.TemplateErrorCode). Empty: the problem.
	Template string
	// Hide names the limits (or rules) that RateLimit headers leave out
	// (httplimit.Options.HiddenLimits).
	Hide []string
	// GlobalStatus is the status of a refusal by global limits alone: 429
	// (when 0) or 503.
	GlobalStatus int
	// RetryJitter spreads clients told to come back at the same moment
	// over up to this much later (httplimit.Options.RetryJitter); 0: the
	// exact wait.
	RetryJitter time.Duration
	// DenyStatus is the status of a refusal on the server's forward-auth
	// endpoint: 429 by default; 403 for nginx's auth_request.
	DenyStatus int
	// StatusPath is the path of the public listener at which a client
	// reads its own standing, spending nothing (GET, answered by
	// httplimit.Middleware.StatusHandler, never proxied): "" for none.
	StatusPath string
	// CORS says which browser origins may read sluice's own responses and
	// the RateLimit headers of the upstream's (response.cors).
	CORS CORS
}
