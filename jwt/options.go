package jwt

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"
)

// Options configures a Verifier. Exactly one of Keys, KeysURL, Discover
// and Secret must be set; every other field's zero value means its
// default.
type Options struct {
	// Keys is a JWK Set document (RFC 7517 section 5, {"keys": [...]}) of
	// the issuer's public keys, used for as long as the Verifier is. Its keys
	// are chosen as KeysURL's are; New fails when it has none usable.
	Keys []byte

	// KeysURL is where the issuer publishes its JWK Set (its "jwks_uri"):
	// an https:// URL, or http:// to a loopback host only (127.0.0.0/8,
	// ::1, "localhost", and 0.0.0.0 and ::, which a connection takes for
	// the local host, in any IPv4-mapped form). New starts fetching it in the background, at once
	// and then every Refresh; until a fetch succeeds, no token verifies.
	// A token whose "kid" the set in use lacks has the set fetched again,
	// at most once every MinRefresh (see MinRefresh). A password in it
	// (https://user:password@host/...) is sent, and never logged.
	//
	// A fetch is a GET that must answer 200 with a JWK Set of at most
	// 1 MiB. Of its keys, the Verifier uses those whose "use" is absent or
	// "sig", whose "key_ops" are absent or name "verify", and that are RSA
	// keys of at least 2048 bits, EC keys on P-256, P-384 or P-521, or
	// Ed25519 keys, the first 100 of them at most, and of each only its
	// public part; symmetric ("oct") keys and keys it
	// cannot read are skipped. A key whose "alg" is set verifies only
	// tokens of that "alg". A token without a "kid" is tried with each key
	// that fits its "alg" only while the set holds at most 4 of them (else
	// it is ErrKey): an issuer that publishes more must name the kid. A
	// fetch that fails, or that finds no usable key, leaves the set in use
	// as it was.
	KeysURL string

	// Discover, instead of KeysURL, finds the JWK Set where the issuer's
	// OpenID Connect discovery document says it is: Issuer must be set (an
	// https:// URL, or http:// to a loopback host, with no query nor
	// fragment), and every fetch reads
	// Issuer + "/.well-known/openid-configuration" first (at most 64 KiB),
	// whose "issuer" must be Issuer and whose "jwks_uri" is then fetched as
	// KeysURL would be (as a redirect from the document would be: see
	// Client). What KeysURL says of fetching holds of both.
	Discover bool

	// Secret is a key shared with the issuer for the HMAC algorithms: at
	// least 32 bytes, as long as the hash of each (RFC 7518 section 3.2):
	// 32 bytes for HS256, 48 for HS384, 64 for HS512. Tokens signed with
	// it are verified whatever their "kid".
	Secret []byte

	// Algorithms lists the "alg"s accepted; a token of any other is
	// ErrMalformed. Empty: with Secret, those of HS256, HS384 and HS512
	// that it is long enough for; with Keys or KeysURL, RS256, RS384,
	// RS512, PS256, PS384, PS512, ES256, ES384, ES512 and EdDSA. The HMAC
	// ones may be listed only with Secret and the others only without, and
	// "none" never: a Verifier that took both kinds could be made to check
	// a token with a public key as its HMAC secret (algorithm confusion).
	Algorithms []string

	// Issuer, when set, is the "iss" a token must carry.
	Issuer string

	// Audiences, when set, are the audiences of which a token's "aud" must
	// name one (or be). Empty: "aud" is not checked.
	Audiences []string

	// SubjectClaim is the claim that names the client, TokenClaims.Subject:
	// a non-empty JSON string, or the token is ErrClaims. Empty: "sub".
	SubjectClaim string

	// SubjectPrefix, when set, is written before the subject claim's value
	// in TokenClaims.Subject ("svc:" makes "export" the client
	// "svc:export"), so that the clients of this issuer and those of
	// another (see NewIssuers) are never limited as one another: without
	// it, a token of any issuer that names "alice" spends alice's quota.
	// A prefix does not set tokens apart from a trusted user header, whose
	// user ids name the same clients: a proxy that forwards "svc:export"
	// names this issuer's "export". At most 64 bytes of printable ASCII.
	SubjectPrefix string

	// PlanClaim is the claim that names the client's plan: a string,
	// TokenClaims.Plan, or an array of strings (groups, roles: Cognito's
	// "cognito:groups", Entra ID's "roles", Okta's "groups"),
	// TokenClaims.Plans, of which the first that names a plan is the plan.
	// A token without it, or whose value is neither, names no plan. Empty:
	// no claim names a plan.
	PlanClaim string

	// Plan, when set, is TokenClaims.Plan of every token whose PlanClaim
	// names none: the plan of an issuer's clients (the internal plan of
	// the tokens of a cluster's service accounts, say). For a token whose
	// PlanClaim gives names, it is the last of TokenClaims.Plans, taken
	// when none of them is a plan.
	Plan string

	// Leeway is how far the clocks of the issuer and the Verifier may
	// disagree: a token is accepted until Leeway after its "exp", and from
	// Leeway before its "nbf" and "iat". Zero means one minute; it must not
	// be negative nor more than 10 minutes, so that a token is never
	// believed long after it expired.
	Leeway time.Duration

	// Refresh is how often KeysURL is fetched again. Zero means 15
	// minutes; it must not be negative. After a failed fetch the next one
	// comes sooner: 1 s after, then twice as long after each failure in a
	// row, up to Refresh or one minute, whichever is shorter.
	Refresh time.Duration

	// MinRefresh is the least time between a fetch of KeysURL and one that
	// a token prompts, when the set in use has no key for it (its "kid" is
	// unknown, or no fetch has succeeded yet), or when none of the keys it
	// may be verified with verifies it (the issuer replaced a key under the
	// same kid, or among keys that name none); a token that comes sooner is
	// ErrKey, or ErrSignature, at once. So tokens with made-up kids or
	// signatures cause at most one fetch per MinRefresh, however many. Zero
	// means 30 seconds; it must not be negative.
	MinRefresh time.Duration

	// Client makes the requests to KeysURL; a redirect is followed only to
	// a URL KeysURL could be, never from https:// to http://, nor to a
	// loopback host or a name under "localhost" ("keys.localhost",
	// "localhost.") from a host that is not a loopback host; other hosts,
	// private addresses among them, may be redirected to, since KeysURL is
	// the operator's choice and what it serves is only ever read as a JWK
	// Set. A fetch is given up at its 10th redirect, or where Client's own
	// CheckRedirect says. Nil: a client of its own with a 10 s timeout.
	// Whatever the client's timeout, a fetch, redirects and discovery
	// document included, is given up after one minute.
	//
	// A URL's host name may resolve to the local host where its text does
	// not say so, and so each connection is checked too, at the address
	// it is made to: unless KeysURL (or Issuer, with Discover) is on a
	// loopback host, a connection to a loopback address as above, for a
	// host other than KeysURL's (or Issuer's) own host and port, is
	// refused, whatever name led there. A connection to a proxy
	// (HTTPS_PROXY) is not checked: the proxy resolves the names behind
	// it. The host's own other addresses are not told from any other
	// host's. Connections are checked when Client is nil, or its
	// Transport is an *http.Transport with no dial function of its own
	// (DialContext, DialTLSContext, Dial, DialTLS all nil), or nil or
	// http.DefaultTransport while that is an *http.Transport: the
	// Verifier then uses a clone of it, whose idle connections Close
	// closes. A Transport of any other kind makes its connections its own
	// way, and only URLs are checked.
	Client *http.Client

	// Clock returns the time at which tokens are judged ("exp", "nbf",
	// "iat"); nil means time.Now. The fetch schedule of KeysURL runs on
	// the real clock.
	Clock func() time.Time

	// Logger receives a warning for each fetch of KeysURL that fails;
	// nil means slog.Default().
	Logger *slog.Logger

	// OnFetch, when set, is called after each fetch of KeysURL with the
	// number of usable keys in the set in use after it and the fetch's
	// error (nil when it succeeded). It is called from the
	// goroutine that fetched, at times from two at once (a Refresh during
	// a background fetch), and must not block. Fetches cut short by Close
	// are not reported.
	OnFetch func(keys int, err error)
}

// Defaults and bounds of Options and of tokens.
const (
	defaultLeeway     = time.Minute
	maxLeeway         = 10 * time.Minute
	defaultRefresh    = 15 * time.Minute
	defaultMinRefresh = 30 * time.Second
	defaultTimeout    = 10 * time.Second
	maxFetchTime      = time.Minute // a fetch's ceiling, whatever Client's timeout
	maxBackoff        = time.Minute // the longest wait after a failed fetch
	firstBackoff      = time.Second // the wait after the first failed fetch in a row
	minSecret         = 32          // bytes
	maxTokenLen       = 16 << 10    // bytes
	maxSubjectPrefix  = 64          // bytes
	maxSetLen         = 1 << 20     // bytes of a fetched JWK Set
	maxDiscoveryLen   = 64 << 10    // bytes of a discovery document
	maxKeys           = 100         // usable keys of a set
	maxKidlessKeys    = 4           // keys a token without a kid is tried with
	maxRedirects      = 10          // followed by a fetch
)

// fieldError is New's error about one field of Options.
func fieldError(field, format string, args ...any) error {
	return fmt.Errorf("jwt: "+field+": "+format, args...)
}
