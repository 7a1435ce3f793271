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
		func(keys []string, next http.Handler) (http.Handler, func()) { return newSluiceHTTP(keys, next, 3) }},
	{"sluice-1limit", "the same with a plan of 1 limit (GCRA per second), for comparison with the peers' single limit",
		func(keys []string, next http.Handler) (http.Handler, func()) { return newSluiceHTTP(keys, next, 1) }},
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
}

// newSluiceHTTP is httplimit's middleware for the bench plan, cut to the
// first n limits.
func newSluiceHTTP(keys []string, next http.Handler, n int) (http.Handler, func()) {
	cfg, err := config.Parse("bench.yaml", []byte(ConfigYAML(keys, "")))
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
