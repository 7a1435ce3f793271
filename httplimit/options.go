package httplimit

import (
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/sluice-dev/sluice"
)

// Options configure a Middleware. The zero value of every field is its
// documented default; only Plans is required. New validates every field
// (see Validate). A Middleware keeps the plans it is given, not copies:
// they must not change once New has them.
type Options struct {
	// Plans are the classes of clients, in the order documentation lists
	// them. At least one is required; names are unique sluice.ValidName
	// strings, and each plan has at least one limit.
	Plans []*Plan
	// Global limits are checked on every request, keyed by
	// GlobalSubject, together with the plan's limits. Their names
	// differ from every plan limit's.
	Global []sluice.Limit
	// DefaultPlan names the plan of identified clients (API key or user)
	// that nothing assigns to another plan. Empty: the first of Plans.
	DefaultPlan string
	// AnonymousPlan names the plan of clients known only by their IP
	// address. Empty: DefaultPlan.
	AnonymousPlan string
	// Scope names the state this Middleware keeps in the store: the store
	// key of a client's limits is Scope, "/" and the client's
	// Identity.Subject, and that of the global limits Scope and "/*".
	// Middlewares with the same Scope on one store share each client's
	// state of every limit they both have (same name and algorithm): say
	// so to share it on purpose, for a Middleware rebuilt with new Options,
	// a reduced-capacity twin, or the replicas of a service on one Redis.
	// Middlewares with different Scopes never share state.
	//
	// Empty: a scope of this Middleware's own, drawn at random by New, that
	// nothing else shares: not another Middleware (two routes limited
	// apart are apart), not one built later from the same Options, not
	// another process on the same store. Otherwise a sluice.ValidName
	// string.
	Scope string

	// Keys are the listed API keys. Requests carrying one are limited as
	// that key, on its plan.
	Keys []Key
	// APIKeyHeaders are the request headers that carry an API key, read
	// in order; "Authorization" is read as "Bearer <key>". A request whose
	// headers, or copies of one header, carry keys that differ (a made-up
	// one beside the one an upstream reads) is the client of the first of
	// them that is listed, or of none: it is then known as without a key,
	// whatever UnknownKeys.
	// Empty: the default, Authorization then X-API-Key.
	APIKeyHeaders []string
	// UserHeader names the header that carries a user id set by an
	// authentication layer in front; it is believed only from
	// TrustedProxies, and of several values only the last, the one the
	// proxy nearest sluice set (see TrustedProxies). Empty: users are not
	// identified.
	UserHeader string
	// PlanHeader names the header that carries a plan name set by an
	// authentication layer in front; it is believed, as UserHeader is,
	// only from TrustedProxies and by its last value. Empty: plans come
	// from keys and the defaults only.
	PlanHeader string
	// TrustedProxies are the peers whose forwarding, user and plan headers
	// are believed. Empty: none are, and the client is the peer. A front
	// proxy must strip or overwrite the user and plan headers a client
	// sends, or append its own value after the client's (Envoy's
	// request_headers_to_add with append): of a header a trusted proxy
	// sets, only the last value is read, as the last hop of
	// X-Forwarded-For is the nearest proxy's. A proxy that sets no value
	// and passes the client's through lets the client choose it. An
	// IPv4-mapped prefix of /96 or longer (::ffff:10.0.0.0/104) is its
	// IPv4 prefix (10.0.0.0/8), as addresses are matched unmapped.
	TrustedProxies []netip.Prefix
	// TrustUnixPeers makes the peers of connections accepted on a
	// Unix-domain socket trusted proxies, as nginx's
	// "set_real_ip_from unix:" does: a reverse proxy on the same host that
	// reaches the application over a socket (nginx proxy_pass
	// http://unix:/run/app.sock). A Unix peer is a request whose context's
	// http.LocalAddrContextKey (set by net/http's Server, and by grpclimit
	// for a call on a Unix socket) is a Unix address, whatever its
	// RemoteAddr holds: there, the path the client bound its end to, which
	// it chooses and which may read as an address. With TrustUnixPeers, a
	// RemoteAddr that holds an address (a PROXY protocol reader's, a
	// handler's) is judged by TrustedProxies, as on any listener; a Unix
	// peer's forwarded client is otherwise the client, as behind a trusted
	// proxy of TrustedProxies, and a request with no forwarded client is
	// limited as "ip:unknown", every such request one client. False: a Unix
	// peer is never trusted and has no address, whatever its RemoteAddr:
	// every request over the socket is the one client "ip:unknown", on
	// AnonymousPlan unless an API key or token names it, and the
	// forwarding, user and plan headers are not believed.
	TrustUnixPeers bool
	// ForwardedHeader is the one forwarding header believed from trusted
	// proxies: "x-forwarded-for" (the default when empty) or "forwarded"
	// (RFC 7239), in any case. Only the header the proxies maintain is
	// safe: the other one arrives as the client wrote it.
	ForwardedHeader string
	// IPv4Prefix and IPv6Prefix are the prefix lengths that group client
	// addresses into one client: 32 and 64 when zero (one IPv6 /64 is one
	// client), at most 32 and 128.
	IPv4Prefix, IPv6Prefix int
	// UnknownKeys says how to limit an API key that is not in Keys, in any
	// case: "ip" (the default when empty) limits its request as one
	// without a key (by a verified token or a trusted UserHeader if it has
	// one, else as an anonymous client, by its address on AnonymousPlan),
	// so that a client that makes up a key for each request gets what it
	// would get without one, whether or not any key is listed. "key" makes
	// each such key a client of its own, by the key's hash on DefaultPlan:
	// made-up keys are then fresh quota, so it is for a deployment whose
	// keys are verified before the middleware, by an authentication layer
	// in front that refuses a key it does not know.
	UnknownKeys string
	// Tokens, when set, verifies the signed tokens (JSON Web Tokens in
	// compact form: three parts joined by dots, the first starting "ey",
	// a JSON object in base64url) that requests carry as
	// "Authorization: Bearer <token>": a token it vouches for limits its
	// client as the user it names (Identity KindUser, after any API key of
	// another header), on the plan it names, else the plan a trusted
	// PlanHeader names, else DefaultPlan. A token it refuses, or one longer
	// than 8 KiB, names no one: the client is then its address, as with a
	// made-up API key, and such a token is never read as an API key. The
	// Middleware remembers what the verifier said of recent tokens: a
	// verified token until it expires and at most 5 minutes, a refused one
	// 10 seconds; and once 16 tokens from one client address have been
	// refused within 10 seconds, the tokens of that address the Middleware
	// does not remember as verified are not sent to the verifier until the
	// 10 seconds have passed (they name no one), so that forged tokens cost
	// a bounded number of verifications. Nil: bearer tokens are API keys like any
	// other.
	Tokens TokenVerifier
	// TokenHeaders are the request headers that may carry a token for
	// Tokens, read in order: "Authorization" as "Bearer <token>", any other
	// as the token alone (oauth2-proxy's X-Forwarded-Access-Token,
	// Pomerium's X-Pomerium-Jwt-Assertion). A token is believed from any
	// peer: its signature, not the header, vouches for it. Of tokens that
	// differ, in several headers or copies of one (a forged one beside
	// the one an upstream reads), the client is the first the verifier
	// vouches for, of at most 4 tried. Empty: Authorization alone.
	TokenHeaders []string

	// Rules limit the requests they match by keys and limits of their own,
	// checked with the plan's and the global limits in the same atomic
	// call; every matching rule applies, in order. See Rule.
	Rules []Rule

	// Exempt lists net/http ServeMux patterns ("GET /healthz") that no
	// limit applies to; a pattern's host ("GET status.example.com/")
	// matches the request's in any case and with or without the root dot,
	// as a Rule's Hosts do; its method matches exactly ("get /healthz" is
	// not exempt by "GET /healthz", though rules and costs match it).
	Exempt []string
	// Penalty puts clients that keep being refused in a penalty box; the
	// zero Penalty boxes no one. See Penalty.
	Penalty Penalty
	// StoreLeases says that the store decides the checks of leased limits
	// from quota leased to this instance, without a round trip, unless the
	// call holds a check it does not lease (redis.Options.Lease; the server
	// sets it when store.redis.lease leases any limit). The penalty box's
	// guard is never leased, so with it every request would go to Redis.
	// With StoreLeases, a request of a client the store said was not in
	// the box, in a call sent less than a second ago, is sent without the
	// guard, and its leases may decide it; a box set on another instance
	// then refuses the client here within a second of being set (see
	// Penalty). The zero value checks the guard with every request. It
	// changes nothing without a Penalty.
	StoreLeases bool
	// StoreLeased, with StoreLeases, reports whether the store leases the
	// limit whose state ID (sluice.Limit.ID) is id: redis.LeaseOptions'
	// Limits, else its Mode. Nil: it leases every limit it can.
	// StoreLeaseMaxAge is its longest lease life (redis.LeaseOptions.MaxAge),
	// a minute when zero or less. A token bucket, GCRA or leaky-bucket meter
	// the store leases admits at most its shared burst at once, its burst
	// less what refills in a lease's life (redis, Leased quota): the
	// RateLimit headers, the problem body and Inspect state that limit
	// (see Middleware.Stated), not the one configured.
	StoreLeased      func(id string) bool
	StoreLeaseMaxAge time.Duration

	// ExemptAddresses are client addresses (through TrustedProxies, as
	// identity reads them) that no limit applies to, whatever their key. A
	// client that a trusted proxy reports as a hop that cannot be read
	// ("unknown", an obfuscated identifier, garbage) is limited as that
	// proxy's address but never exempt by it, even where the proxy's
	// address is listed here. An IPv4-mapped prefix is its IPv4 one, as in
	// TrustedProxies.
	ExemptAddresses []netip.Prefix
	// ExemptKeys are names of Keys that no limit applies to.
	ExemptKeys []string
	// ExemptUsers are user ids (of UserHeader) that no limit applies to.
	ExemptUsers []string
	// ExemptPlans are names of plans whose clients no limit applies to (a
	// key's plan of its own counts as the plan of its name): a plan of
	// internal services, say.
	ExemptPlans []string
	// OnReported, when set, is called once an admitted request is answered,
	// for each of its limits that counts what the answer reports
	// (CountHeader): with the limit's name, the cost the request reserved,
	// and the units the answer reported (reported true) — or, when it
	// reported no whole number of units, 0 and false, the cost then staying
	// counted. It runs on the request's goroutine: the hook for metrics that
	// show an upstream not reporting its usage.
	OnReported func(limit string, cost, used int64, reported bool)
	// OnExempt, when set, is called for every exempt request with why
	// (ExemptRoute, ExemptAddress, ExemptKey, ExemptUser): exempt requests
	// are never limited, never counted in the store and never observed by
	// Observer. A read of an exempt client's standing (StatusHandler) and a
	// DecideFor of cost 0 (a peek) are no request to the API and are not
	// told. It runs on the request's goroutine and must not keep r.
	OnExempt func(r *http.Request, reason string)
	// OnRefusal, when set, is called for every refusal Refuse and
	// RefuseWithStatus write — a limit's, or the penalty box's
	// (res.Penalized) — with the status written, after the response is
	// written: the hook for a log of refusals. A decision made with
	// DecideFor is no refusal written and is not told. It runs on the
	// request's goroutine and must not keep r or res.
	OnRefusal func(r *http.Request, res *Result, status int)
	// OnQueued, when set, is called by Handler for a request a leaky-bucket
	// queue admitted with a delay (its Decision.Delay, above zero), with
	// the ResponseWriter and request Handler was given, just before
	// Handler waits the delay out: the hook for moving the connection's
	// write deadline past the wait (http.ResponseController's
	// SetWriteDeadline), for net/http's WriteTimeout runs while the
	// request waits, and over HTTP/2 resets its stream when it passes. It
	// runs on the request's goroutine and must not keep w or r. Callers of
	// Decide wait the delay out themselves and are not told.
	OnQueued func(w http.ResponseWriter, r *http.Request, delay time.Duration)

	// Headers lists the RateLimit header modes sent on every limited
	// response: ModeIETF, ModeDraft7, ModeDraft6, ModeLegacy, in any case.
	// Empty: ModeIETF alone.
	Headers []string
	// HiddenLimits names the limits whose items RateLimit and
	// RateLimit-Policy leave out (ModeIETF; the draft modes' policy): a
	// plan's or global limit's name, a rule's limit as "<rule>.<limit>", or
	// a rule's name for all of its limits. Hidden limits are enforced all
	// the same; a refusal's body and Retry-After still say what refused.
	// The single-limit fields (draft 6 and 7's RateLimit, X-RateLimit-*)
	// show the deciding limit whatever it is.
	HiddenLimits []string
	// Count says which admitted requests a limit counts, and how much of
	// them, by the answer: for a plan's or global limit's name, a rule's
	// limit as "<rule>.<limit>", or a rule's name for those of its limits
	// not named on their own, CountAll (the default), CountSuccesses (below
	// 400), CountFailures (400 and above), CountStatus and a list of
	// statuses, or CountHeader and the name of a header in which the
	// answer reports the units used. Handler records the status and header
	// its next handler writes (only for requests that such a limit applies
	// to) and refunds what they do not count once next returns; a handler
	// that panics counts as a failure. Callers of Decide and DecideFor
	// pass the answer with DoneWithResponse (or DoneWithStatus), or keep
	// the decision for later with Keep. Only a fixed window, sliding
	// log or sliding counter can be refunded exactly (see
	// sluice.Refunder), so only they may count by response. A refund is
	// made after the answer, so requests in flight count until they end.
	Count map[string]string
	// RefusalTemplate, when set, is the JSON body of refusals in place of
	// the RFC 9457 problem (Content-Type application/json): one JSON value
	// in which a string that is exactly a placeholder, "{{retryAfter}}",
	// becomes that member of the Problem the refusal would send, as JSON
	// (null when the problem has none), and a placeholder inside a longer
	// string its text. Placeholders are the Problem's JSON member names:
	// type, title, status, detail, instance, violated-policies, retryAfter,
	// policy, limit, window, plan, currentUsage, upgrade, documentation.
	// A number beyond an IEEE double (1e700) is refused, as clients' JSON
	// readers would. TemplateErrorCode is a ready one. Headers are those
	// of the problem.
	// A gRPC or gRPC-Web call (Content-Type application/grpc…), which
	// reads no body, is refused with the problem whatever the template.
	RefusalTemplate string
	// GlobalStatus is the status of a refusal by global limits alone:
	// http.StatusTooManyRequests (the default when 0) or
	// http.StatusServiceUnavailable, with the problem type
	// ProblemReducedCapacity: the service, not the client, is at its limit.
	// Refusals with another status (RefuseWithStatus) keep theirs.
	GlobalStatus int
	// RetryJitter, when above zero, spreads out clients told to come back
	// at the same moment (every client of a daily fixed window at its end,
	// say). What a client with nothing left of a limit is told (Retry-After,
	// the RateLimit t, a refusal body's retryAfter and resetsAt) is later
	// by whole seconds in [0, RetryJitter], and by at most a tenth of the
	// window of the limit whose wait it delays (Retry-After's; when
	// admitted, the exhausted limit that resets last): none for a
	// per-second limit, nor for a concurrency limit's poll, whose lease
	// time is no window.
	// The seconds are a hash of the client and the moment, so a client
	// asking twice is told the same. A t never passes its policy's w, so
	// Retry-After may be the later. The Result's Decision and Statuses
	// carry the later figures; a client that comes back at the exact moment
	// is admitted all the same. Zero: the exact wait. At most
	// MaxRetryJitter.
	RetryJitter time.Duration
	// DocsURL, when set, is linked from 429 bodies as "documentation".
	DocsURL string

	// Logger receives refusals (debug) and failures to decide (warn); API
	// keys never appear, only hashes. A failure that a store repeats for
	// every request (an undecided request, a refund or a release that
	// failed) is written at most once every 10 s for each kind, the next
	// line counting those left out ("left_out"): Observer sees them all.
	// Nil: slog.Default().
	Logger *slog.Logger
	// Clock sets the time of absolute times in headers and bodies
	// (X-RateLimit-Reset, resetsAt) and of Result.Now. Nil: time.Now. A
	// store with a clock of its own (memory.WithClock) wants the same one
	// here.
	Clock func() time.Time
	// Observer, when set, is called after every decision and every failure
	// to decide, with how long the limiter took: the hook for metrics and
	// dashboards. Peeks — StatusHandler's reads of a client's standing and
	// DecideFor's checks of cost 0 — decide no request and spend nothing:
	// they are not observed, nor are their failures. A failure because the
	// request's context ended (the client left) has an err that wraps the
	// context's error (context.Canceled). It runs on the
	// request's goroutine, concurrently with other requests, and must not
	// keep res.
	Observer func(res *Result, took time.Duration, err error)
	// ErrorHandler decides what happens when no decision could be made
	// (the store failed beyond its own failure policy) for a client still
	// waiting (Handler serves no client that left): it returns true to
	// serve the request anyway. Nil: log a warning (see Logger) and serve
	// it (fail open), so that a broken limiter never takes the API down
	// with it.
	ErrorHandler func(w http.ResponseWriter, r *http.Request, err error) bool
}

// Key is one listed API key. Keys are known by their SHA-256 only: the
// raw key is never needed, stored or logged.
type Key struct {
	// Name labels the key in logs, metrics and dashboards; it is never
	// the key itself.
	Name string
	// SHA256 is the SHA-256 of the key, as sha256.Sum256 returns it. A
	// request's key of more than 1,024 bytes is never read (its client is
	// known otherwise, by its address at last), so a longer key, which
	// only its hash here shows, is never recognised.
	SHA256 [32]byte
	// Plan is the key's plan: one of Options.Plans, or a plan of the
	// key's own (say one of them with a limit raised). Nil: DefaultPlan.
	Plan *Plan
}

// Default values of Options' fields.
const (
	defaultIPv4Prefix = 32
	defaultIPv6Prefix = 64
	forwardedXFF      = "x-forwarded-for"
	forwardedRFC7239  = "forwarded"
	unknownKeysIP     = "ip"
	unknownKeysKey    = "key"
)

// WithDefaults returns o with every empty field that has a default set to
// it, header modes and ForwardedHeader in lower case, and keys without a
// plan on DefaultPlan (when it names a plan). It validates nothing; New
// applies it before Validate's rules. Slices that change are copies: o's
// are never written.
func (o Options) WithDefaults() Options {
	if o.DefaultPlan == "" && len(o.Plans) > 0 && o.Plans[0] != nil {
		o.DefaultPlan = o.Plans[0].Name
	}
	if o.AnonymousPlan == "" {
		o.AnonymousPlan = o.DefaultPlan
	}
	if len(o.TokenHeaders) == 0 && o.Tokens != nil {
		o.TokenHeaders = []string{"Authorization"}
	}
	if len(o.APIKeyHeaders) == 0 {
		o.APIKeyHeaders = []string{"Authorization", "X-Api-Key"}
	}
	o.ForwardedHeader = strings.ToLower(o.ForwardedHeader)
	if o.ForwardedHeader == "" {
		o.ForwardedHeader = forwardedXFF
	}
	if o.IPv4Prefix == 0 {
		o.IPv4Prefix = defaultIPv4Prefix
	}
	if o.IPv6Prefix == 0 {
		o.IPv6Prefix = defaultIPv6Prefix
	}
	o.UnknownKeys = strings.ToLower(o.UnknownKeys)
	if o.UnknownKeys == "" {
		o.UnknownKeys = unknownKeysIP
	}
	if len(o.Headers) == 0 {
		o.Headers = []string{ModeIETF}
	} else {
		modes := make([]string, len(o.Headers))
		for i, m := range o.Headers {
			modes[i] = strings.ToLower(m)
		}
		o.Headers = modes
	}
	if len(o.Rules) > 0 {
		rules := make([]Rule, len(o.Rules))
		for i, r := range o.Rules {
			if r.HeaderFrom == "" {
				r.HeaderFrom = HeaderFromTrusted
			}
			if r.Fallback == "" {
				r.Fallback = FallbackIP
			}
			rules[i] = r
		}
		o.Rules = rules
	}
	if def := planNamed(o.Plans, o.DefaultPlan); def != nil {
		for i := range o.Keys {
			if o.Keys[i].Plan == nil {
				o.Keys = append([]Key(nil), o.Keys...)
				for j := i; j < len(o.Keys); j++ {
					if o.Keys[j].Plan == nil {
						o.Keys[j].Plan = def
					}
				}
				break
			}
		}
	}
	return o
}

// planNamed returns the plan of plans called name, or nil.
func planNamed(plans []*Plan, name string) *Plan {
	for _, p := range plans {
		if p != nil && p.Name == name {
			return p
		}
	}
	return nil
}
