package bench

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/httprate"
	ulule "github.com/ulule/limiter/v3"
	"github.com/ulule/limiter/v3/drivers/middleware/stdlib"
	ulmemory "github.com/ulule/limiter/v3/drivers/store/memory"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// APIKeyHeader carries the API key in the HTTP benchmarks, for every
// library.
const APIKeyHeader = "X-API-Key"

// APIKeys returns n API keys, "bench-key-0" … "bench-key-<n-1>".
func APIKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("bench-key-%d", i)
	}
	return keys
}

// The plan of the HTTP and server benchmarks: three limits on every API
// key, never reached by the benchmarks (Rate per second per key).
const planYAML = `plans:
  bench:
    limits:
      - {name: per-second, algorithm: gcra, quantity: %d, window: 1s}
      - {name: per-minute, algorithm: sliding-window-counter, quantity: %d, window: 1m}
      - {name: per-day, algorithm: fixed-window, quantity: %d, window: 24h}
default_plan: bench
`

// ConfigYAML returns a sluice configuration: the bench plan, the API keys
// (each listed by its SHA-256, on the bench plan), identity by the
// X-API-Key header, and extra (top-level sections) prepended.
func ConfigYAML(keys []string, extra string) string {
	var b strings.Builder
	b.WriteString(extra)
	b.WriteString("identity:\n  api_key_headers: [" + APIKeyHeader + "]\n")
	fmt.Fprintf(&b, planYAML, Rate, 60*Rate, 86400*Rate)
	b.WriteString("keys:\n")
	for i, k := range keys {
		sum := sha256.Sum256([]byte(k))
		fmt.Fprintf(&b, "  - {name: k%d, sha256: %s, plan: bench}\n", i, hex.EncodeToString(sum[:]))
	}
	return b.String()
}

// An HTTPPeer is one rate-limiting middleware under test, in front of next.
type HTTPPeer struct {
	Name string
	Lib  string
	// New wraps next; close releases what it started.
	New func(keys []string, next http.Handler) (h http.Handler, close func())
}

// HTTPPeers lists the middleware, the bare handler first.
var HTTPPeers = []HTTPPeer{
	{"bare", "the handler alone: no rate limiting (the baseline)",
		func(_ []string, next http.Handler) (http.Handler, func()) { return next, func() {} }},
	{"sluice-3limits", "sluice httplimit.New(limiter, cfg).Handler: memory store, API key identity (X-API-Key, 10,000 keys listed by SHA-256), " +
		"a plan of 3 limits (GCRA per second, sliding-window counter per minute, fixed window per day) decided in one call, IETF RateLimit headers",
		func(keys []string, next http.Handler) (http.Handler, func()) {
			return newSluiceHTTP(keys, next, 3, false)
		}},
	{"sluice-1limit", "the same with a plan of 1 limit (GCRA per second), for comparison with the peers' single limit",
		func(keys []string, next http.Handler) (http.Handler, func()) {
			return newSluiceHTTP(keys, next, 1, false)
		}},
	{"httprate", "github.com/go-chi/httprate v0.16.1 LimitBy(10000, time.Second, key from X-API-Key): local sliding-window counter, X-RateLimit-* headers",
		func(_ []string, next http.Handler) (http.Handler, func()) {
			return httprate.LimitBy(Rate, time.Second, func(r *http.Request) (string, error) {
				return r.Header.Get(APIKeyHeader), nil
			})(next), func() {}
		}},
	{"ulule", "github.com/ulule/limiter/v3 v3.11.2 drivers/middleware/stdlib + memory store, 10000 per second, key from X-API-Key, X-RateLimit-* headers",
		func(_ []string, next http.Handler) (http.Handler, func()) {
			lim := ulule.New(ulmemory.NewStore(), ulule.Rate{Period: time.Second, Limit: Rate})
			mw := stdlib.NewMiddleware(lim, stdlib.WithKeyGetter(func(r *http.Request) string { return r.Header.Get(APIKeyHeader) }))
			return mw.Handler(next), func() {}
		}},
	{"sluice-3limits+2rules", "sluice as sluice-3limits, with two rules that match every request, checked in the same call as the plan: " +
		"items (GET /v1/items, keyed by the client, a sliding-window counter per minute) and tenants (/v1/ subtree, keyed by the X-Tenant header " +
		"and the route, GCRA per second): 5 limits, IETF RateLimit headers for all 5",
		func(keys []string, next http.Handler) (http.Handler, func()) {
			return newSluiceHTTP(keys, next, 3, true)
		}},
	{"httprate-5limits", "the same 5 limits with httprate: five LimitBy middlewares chained, four keyed by X-API-Key (10000/s, 600000/min, " +
		"864000000/day, 600000/min) and one by X-Tenant (1e9/s); each sets its X-RateLimit-* headers",
		func(_ []string, next http.Handler) (http.Handler, func()) {
			h := next
			for _, l := range fiveLimits() {
				h = httprate.LimitBy(int(l.n), l.per, l.key)(h)
			}
			return h, func() {}
		}},
	{"ulule-5limits", "the same 5 limits with ulule/limiter: five stdlib middlewares on memory stores chained, keyed as httprate-5limits; " +
		"each sets its X-RateLimit-* headers",
		func(_ []string, next http.Handler) (http.Handler, func()) {
			h := next
			for _, l := range fiveLimits() {
				lim := ulule.New(ulmemory.NewStore(), ulule.Rate{Period: l.per, Limit: l.n})
				key := l.key
				h = stdlib.NewMiddleware(lim, stdlib.WithKeyGetter(func(r *http.Request) string {
					k, _ := key(r)
					return k
				})).Handler(h)
			}
			return h, func() {}
		}},
}

// peerLimit is one limit of the peers' 5-limit rows: n per per, keyed by key.
type peerLimit struct {
	n   int64
	per time.Duration
	key func(*http.Request) (string, error)
}

// fiveLimits are sluice-3limits+2rules' limits as the peers state them: the
// plan's three and the items rule's by API key, the tenants rule's by
// tenant (a middleware mounted on /v1/ needs no route in its key).
func fiveLimits() []peerLimit {
	byKey := func(r *http.Request) (string, error) { return r.Header.Get(APIKeyHeader), nil }
	byTenant := func(r *http.Request) (string, error) { return r.Header.Get(TenantHeader), nil }
	return []peerLimit{
		{Rate, time.Second, byKey}, {60 * Rate, time.Minute, byKey}, {86400 * Rate, 24 * time.Hour, byKey},
		{60 * Rate, time.Minute, byKey}, {TenantRate, time.Second, byTenant},
	}
}

// TenantHeader names the request's tenant in the HTTP benchmarks: every
// request carries TenantHeader: acme, for the rows that limit by tenant.
const TenantHeader = "X-Tenant"

// rulesYAML are the two rules of the sluice-3limits+2rules row, both
// matching every request of BenchmarkMiddleware (GET /v1/items): one keyed
// by the client (its API key), one by the tenant header and the route.
// Their limits, like the plan's, are never reached.
const rulesYAML = `rules:
  - name: items
    match: {methods: [GET], paths: ["/v1/items"]}
    limits:
      - {name: per-minute, algorithm: sliding-window-counter, quantity: %d, window: 1m}
  - name: tenants
    match: {paths: ["/v1/"]}
    key: ["header:` + TenantHeader + `", route]
    header_from: any
    limits:
      - {name: per-second, algorithm: gcra, quantity: %d, window: 1s}
`

// TenantRate is the per-second limit of the tenant every request shares.
const TenantRate = 1_000_000_000

// newSluiceHTTP is httplimit's middleware for the bench plan, cut to the
// first n limits, with the two rules of rulesYAML when rules is set.
func newSluiceHTTP(keys []string, next http.Handler, n int, rules bool) (http.Handler, func()) {
	extra := ""
	if rules {
		extra = fmt.Sprintf(rulesYAML, 60*Rate, TenantRate)
	}
	cfg, err := config.Parse("bench.yaml", []byte(ConfigYAML(keys, extra)))
	if err != nil {
		panic(err)
	}
	for _, p := range cfg.Policy.Plans {
		p.Limits = p.Limits[:n]
	}
	st := memory.New(memory.WithMaxKeys(1_000_000))
	o := cfg.HTTPLimitOptions()
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	mw, err := httplimit.New(sluice.NewLimiter(st), o)
	if err != nil {
		panic(err)
	}
	return mw.Handler(next), func() { st.Close() }
}

// BareHandler is the handler every middleware wraps: a 200 with a short
// body, no allocation.
var BareHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.WriteHeader(http.StatusOK)
	w.Write(okBody)
})

var okBody = []byte("ok\n")

// DiscardWriter is a reusable http.ResponseWriter that keeps the status and
// counts the body; Reset clears it between requests (the header map keeps
// its space, as a server's would between requests on one connection).
type DiscardWriter struct {
	H      http.Header
	Status int
	N      int
}

// NewDiscardWriter returns an empty writer.
func NewDiscardWriter() *DiscardWriter { return &DiscardWriter{H: http.Header{}} }

func (w *DiscardWriter) Header() http.Header { return w.H }
func (w *DiscardWriter) WriteHeader(s int) {
	if w.Status == 0 {
		w.Status = s
	}
}
func (w *DiscardWriter) Write(b []byte) (int, error) {
	if w.Status == 0 {
		w.Status = http.StatusOK
	}
	w.N += len(b)
	return len(b), nil
}

// Reset clears w for the next request.
func (w *DiscardWriter) Reset() {
	clear(w.H)
	w.Status, w.N = 0, 0
}
