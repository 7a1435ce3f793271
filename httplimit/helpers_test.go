package httplimit_test

import (
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

type fakeClock struct{ us atomic.Int64 }

func clockAt(t time.Time) *fakeClock {
	c := &fakeClock{}
	c.us.Store(sluice.MicrosSinceEpoch(t))
	return c
}
func (c *fakeClock) Now() time.Time          { return sluice.TimeFromMicros(c.us.Load()) }
func (c *fakeClock) Advance(d time.Duration) { c.us.Add(int64(d / time.Microsecond)) }

// setup loads yamlText and returns a handler limiting an "ok" handler, with
// a fake clock shared by the store and the middleware.
func setup(t testing.TB, yamlText string, start time.Time) (http.Handler, *fakeClock) {
	t.Helper()
	return setupNext(t, yamlText, start, okHandler())
}

// setupNext is setup limiting next.
func setupNext(t testing.TB, yamlText string, start time.Time, next http.Handler) (http.Handler, *fakeClock) {
	t.Helper()
	cfg, err := config.Parse("test.yaml", []byte(yamlText))
	if err != nil {
		t.Fatal(err)
	}
	clock := clockAt(start)
	store := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
	o := quiet(cfg)
	o.Clock = clock.Now
	mw, err := httplimit.New(sluice.NewLimiter(store), o)
	if err != nil {
		t.Fatal(err)
	}
	return mw.Handler(next), clock
}

// okHandler answers "ok".
func okHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
}

// quiet returns the middleware options of cfg, logging nowhere.
func quiet(cfg *config.Config) httplimit.Options {
	o := cfg.HTTPLimitOptions()
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	return o
}

type req struct {
	method, path, remote string
	header               map[string]string
	// multi are headers sent with several values, in order.
	multi map[string][]string
}

// request returns r as an *http.Request: GET /api/search unless r says
// otherwise.
func (r req) request() *http.Request {
	if r.method == "" {
		r.method = "GET"
	}
	if r.path == "" {
		r.path = "/api/search"
	}
	hr := httptest.NewRequest(r.method, r.path, nil)
	if r.remote != "" {
		hr.RemoteAddr = r.remote
	}
	for k, v := range r.header {
		hr.Header.Set(k, v)
	}
	for k, vs := range r.multi {
		for _, v := range vs {
			hr.Header.Add(k, v)
		}
	}
	return hr
}

func do(h http.Handler, r req) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r.request())
	return w
}

// hotPlan returns a configuration whose one plan, default and anonymous,
// keeps the first n (1 to 3) of a per-second GCRA, a per-minute sliding
// window counter and a per-day fixed window, each too large to be reached,
// with one listed API key, "the-key", in header X-API-Key.
func hotPlan(tb testing.TB, n int) *config.Config {
	tb.Helper()
	cfg, err := config.Parse("b.yaml", []byte(fmt.Sprintf(`
identity: {api_key_headers: [X-API-Key]}
plans:
  p:
    limits:
      - {name: per-second, algorithm: gcra, quantity: 1000000000, window: 1s}
      - {name: per-minute, algorithm: sliding-window-counter, quantity: 1000000000, window: 1m}
      - {name: per-day, algorithm: fixed-window, quantity: 1000000000, window: 24h}
default_plan: p
anonymous_plan: p
keys: [{name: k, sha256: %x, plan: p}]
`, sha256.Sum256([]byte("the-key")))))
	if err != nil {
		tb.Fatal(err)
	}
	for _, p := range cfg.Policy.Plans {
		p.Limits = p.Limits[:n]
	}
	return cfg
}
