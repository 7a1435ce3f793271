package httplimit_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/internal/storetest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/overlimit"
)

// As `sluice serve` runs with Redis, an over-limit cache stands between
// the middleware and the store. A refusal it repeats without asking the
// store knows nothing of a limit the remembered refusal did not reach (a
// rule's, on another route): its status is sluice.Status.Undecided, and
// the RateLimit field has no item for it rather than r=0;t=0 — "nothing
// left, all of it back now" — while the store holds all 100 of it. What
// the field does state is what the store states.
func TestACachedRefusalStatesNoFiguresOfALimitItDidNotEvaluate(t *testing.T) {
	clk := storetest.NewClock()
	opts := httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{
			sluice.FixedWindow(1, time.Second).Named("per-second"),
		}}},
		Rules: []httplimit.Rule{{Name: "uploads", Paths: []string{"/upload"},
			Limits: []sluice.Limit{sluice.FixedWindow(100, 24*time.Hour).Named("uploads")}}},
		Clock:  clk.Now,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	build := func(cached bool) http.Handler {
		mem := memory.New(memory.WithClock(clk.Now), memory.WithSweepInterval(0))
		t.Cleanup(func() { mem.Close() })
		var store sluice.Store = mem
		if cached {
			store = overlimit.New(mem, overlimit.Options{Clock: clk.Now})
		}
		mw, err := httplimit.New(sluice.NewLimiter(store), opts)
		if err != nil {
			t.Fatal(err)
		}
		return mw.Handler(okHandler())
	}
	withCache, without := build(true), build(false)
	get := func(h http.Handler, path string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", path, nil)
		r.RemoteAddr = "192.0.2.7:1234"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	for _, path := range []string{"/api/search", "/api/search"} { // admitted, then refused by the store
		a, b := get(withCache, path), get(without, path)
		if a.Code != b.Code {
			t.Fatalf("GET %s: %d with the cache, %d without", path, a.Code, b.Code)
		}
	}
	a, b := get(withCache, "/upload"), get(without, "/upload")
	if a.Code != 429 || b.Code != 429 {
		t.Fatalf("GET /upload: %d with the cache, %d without; want 429 both", a.Code, b.Code)
	}
	const perSecond = `"per-second";r=0;t=1`
	if got, want := b.Header().Get("RateLimit"), perSecond+`, "uploads.uploads";r=100;t=0`; got != want {
		t.Fatalf("the store's refusal states RateLimit: %s, want %s", got, want)
	}
	if got := a.Header().Get("RateLimit"); got != perSecond {
		t.Errorf("the cache's refusal states RateLimit: %s\nwant %s: the uploads limit was not evaluated (r=0 tells the client it has none left)", got, perSecond)
	}
	if got, want := a.Header().Get("RateLimit-Policy"), b.Header().Get("RateLimit-Policy"); got != want {
		t.Errorf("the cache's refusal states RateLimit-Policy: %s, the store's %s", got, want)
	}
	if got, want := a.Body.String(), b.Body.String(); got != want {
		t.Errorf("the cache's refusal: %s\nthe store's: %s", got, want)
	}
}
