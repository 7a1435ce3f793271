package jwt

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/internal/redact"
)

var _ httplimit.TokenVerifier = (*Verifier)(nil)

// A Verifier verifies JSON Web Tokens against an issuer's keys and says
// whom they name: it is an httplimit.TokenVerifier. Its methods are safe
// for concurrent use.
//
// A Verifier must be made with New; the zero Verifier verifies no token
// (an error for each) and has no keys. One with Options.KeysURL fetches in
// a goroutine of its own until Close.
type Verifier struct {
	algs      []jose.SignatureAlgorithm
	issuer    string
	audiences []string
	subject   string // the claim
	prefix    string // Options.SubjectPrefix
	plan      string // the claim
	fixedPlan string // Options.Plan
	leeway    time.Duration
	clock     func() time.Time

	set   atomic.Pointer[keySet] // nil until a fetch of KeysURL succeeds
	fetch *fetcher               // nil unless Options.KeysURL
}

// New returns a Verifier configured by o, or the error of o.Validate,
// which names the field of o that is wrong. With Options.KeysURL it starts a goroutine that fetches
// the set at once and then every Options.Refresh; New itself makes no
// request, so tokens are ErrKey until the first fetch succeeds (a token
// that comes while it runs waits for it). Such a Verifier must be closed.
func New(o Options) (*Verifier, error) {
	return newVerifier(o, hooks{})
}

// hooks are what tests put in place of the clock and of name resolution.
type hooks struct {
	now func() time.Time // paces the fetches tokens prompt; nil: time.Now
	// resolve, when set, is the address a connection of the fetcher's own
	// transport for addr ("host:port") is made to, as though its host
	// resolved there (see dialGuard).
	resolve func(addr string) string
}

// newVerifier is New, with h in place of the clock and name resolution.
func newVerifier(o Options, h hooks) (*Verifier, error) {
	algs, keys, err := o.validate()
	if err != nil {
		return nil, err
	}
	v := &Verifier{
		algs:      algs,
		issuer:    o.Issuer,
		audiences: append([]string(nil), o.Audiences...),
		subject:   o.SubjectClaim,
		prefix:    o.SubjectPrefix,
		plan:      o.PlanClaim,
		fixedPlan: o.Plan,
		leeway:    o.Leeway,
		clock:     o.Clock,
	}
	if v.subject == "" {
		v.subject = "sub"
	}
	if v.leeway == 0 {
		v.leeway = defaultLeeway
	}
	if v.clock == nil {
		v.clock = time.Now
	}
	switch {
	case len(o.Secret) > 0:
		v.set.Store(secretSet(append([]byte(nil), o.Secret...)))
	case keys != nil:
		v.set.Store(keys)
	default: // KeysURL or Discover
		v.fetch = newFetcher(o, &v.set, h)
		v.fetch.start()
	}
	return v, nil
}

// newFetcher returns the fetcher of o.KeysURL into set, not started.
func newFetcher(o Options, set *atomic.Pointer[keySet], h hooks) *fetcher {
	now := h.now
	if now == nil {
		now = time.Now
	}
	f := &fetcher{
		url:        o.KeysURL,
		discovered: o.Discover,
		refresh:    o.Refresh,
		minRefresh: o.MinRefresh,
		log:        o.Logger,
		onFetch:    o.OnFetch,
		now:        now,
		set:        set,
	}
	if o.Discover {
		f.url = strings.TrimSuffix(o.Issuer, "/") + "/.well-known/openid-configuration"
		f.issuer = o.Issuer
	}
	f.shown = redact.URL(f.url)
	f.client, f.transport = newClient(o.Client, newDialGuard(f.url, h.resolve))
	if f.refresh == 0 {
		f.refresh = defaultRefresh
	}
	if f.minRefresh == 0 {
		f.minRefresh = defaultMinRefresh
	}
	if f.log == nil {
		f.log = slog.Default()
	}
	f.ctx, f.cancel = context.WithCancel(context.Background())
	return f
}

// Refresh fetches Options.KeysURL now and returns once the fetch is done
// (its error, nil when the set in use is now the one fetched) or ctx is.
// A failed fetch leaves the set in use as it was. Without KeysURL it
// returns nil; after Close, an error.
func (v *Verifier) Refresh(ctx context.Context) error {
	if v.fetch == nil {
		return nil
	}
	return v.fetch.fetchNow(ctx)
}

// Keys returns the number of usable keys in the set in use: 0 before the
// first fetch of Options.KeysURL succeeds, 1 with Options.Secret.
func (v *Verifier) Keys() int {
	return v.set.Load().len()
}

// Close stops the goroutine that fetches Options.KeysURL, cuts short any
// fetch running, and returns once they have ended. Tokens are verified
// after Close with the set in use then, which no longer changes. Close is
// idempotent and always returns nil.
func (v *Verifier) Close() error {
	if v.fetch != nil {
		v.fetch.close()
	}
	return nil
}

// keysFor returns the keys that may verify a token of kid and alg, and
// the set they are of: seen, the set in use when the token came, or one
// put in use since. When seen has none and its keys are fetched, the set
// in use is looked at, a fetch having perhaps ended since; when it has
// none either, the set is fetched again, at most once every
// Options.MinRefresh, waiting for that fetch within ctx, and the set in
// use looked at once more (a fetch may end between the look and the
// ask, too late to prompt another). A token without a kid that more than
// maxKidlessKeys keys fit is ErrKey, with no fetch.
func (v *Verifier) keysFor(ctx context.Context, seen *keySet, kid string, alg jose.SignatureAlgorithm) ([]key, *keySet, error) {
	if keys, err := seen.candidates(kid, alg); err != nil || len(keys) > 0 {
		return keys, seen, err
	}
	what := fmt.Sprintf("kid %.64q, alg %s", kid, alg) // a made-up kid may be long
	if v.fetch == nil {
		return nil, seen, fmt.Errorf("%w: none of the set has %s", ErrKey, what)
	}
	if set := v.set.Load(); set != seen {
		if keys, err := set.candidates(kid, alg); err != nil || len(keys) > 0 {
			return keys, set, err
		}
	}
	perr := v.fetch.prompted(ctx)
	set := v.set.Load()
	if keys, err := set.candidates(kid, alg); err != nil || len(keys) > 0 {
		return keys, set, err
	}
	if perr != nil {
		return nil, set, fmt.Errorf("%w: none of the set in use has %s, and %w", ErrKey, what, perr)
	}
	return nil, set, fmt.Errorf("%w: none of the set has %s, fetched again", ErrKey, what)
}
