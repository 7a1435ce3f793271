package httplimit_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// reloadsOn10March returns handlers built from text(arg), each as a
// reload of the configuration, over one memory store and one scope, at
// 10 March 2027 12:00 UTC.
func reloadsOn10March(t *testing.T, text func(string) string) func(string) http.Handler {
	clock := clockAt(time.Date(2027, 3, 10, 12, 0, 0, 0, time.UTC))
	store := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { store.Close() })
	limiter := sluice.NewLimiter(store)
	return func(arg string) http.Handler {
		cfg, err := config.Parse("t.yaml", []byte(text(arg)))
		if err != nil {
			t.Fatal(err)
		}
		o := quiet(cfg)
		o.Clock, o.Scope = clock.Now, "api" // one scope across reloads, as the server's
		mw, err := httplimit.New(limiter, o)
		if err != nil {
			t.Fatal(err)
		}
		return mw.Handler(okHandler())
	}
}

// A monthly quota spent on 10 March stays spent when a reload moves its
// calendar west mid-month (zone "-05:00", or starts: 5): its last charge
// falls in the new calendar's month ([1 March 05:00 UTC, 1 April 05:00
// UTC), or from 5 March), although the month that counted it started
// before it (docs/operations.md: a moved calendar keeps a count whose last
// charge falls in its window in progress).
func TestAMonthsCalendarMovedWestMidMonthKeepsWhatWasSpent(t *testing.T) {
	for _, tc := range []struct{ name, after string }{
		{"zone -05:00", `zone: "-05:00"`},
		{"starts 5", `starts: 5`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			handler := reloadsOn10March(t, func(extra string) string {
				return `
identity: {api_key_headers: [X-API-Key]}
plans:
  free: {limits: [{name: per-month, algorithm: fixed-window, quantity: 5, window: month` + extra + `}]}
default_plan: free
keys: [{name: acme, sha256: 1fbfd5e2a34698deb796eb78add256a067ec065519b8329b1eb85f5e2ef906d4, plan: free}] # demo-pro-key
`
			})
			acme := req{remote: "192.0.2.1:1", header: map[string]string{"X-API-Key": "demo-pro-key"}}
			before := handler("")
			for range 5 {
				do(before, acme)
			}
			if w := do(handler(", "+tc.after), acme); w.Code != 429 {
				t.Errorf("after the month's calendar moved (%s) on 10 March: %d %q; want 429: the 5 units last charged on 10 March "+
					"count in the new calendar's month", tc.after, w.Code, w.Header().Get("RateLimit"))
			}
		})
	}
}

// docs/quotas.md: an upgrade keeps the month's usage, also to a plan whose
// months are those of a zone west of the old plan's (here UTC-05:00).
func TestAnUpgradeToAPlanWhoseMonthIsOfAZoneWestKeepsTheMonthsUsage(t *testing.T) {
	handler := reloadsOn10March(t, func(plan string) string {
		return `
identity: {api_key_headers: [X-API-Key]}
plans:
  free: {limits: [{name: per-month, algorithm: fixed-window, quantity: 5, window: month}]}
  pro: {limits: [{name: per-month, algorithm: fixed-window, quantity: 1000, window: month, zone: "-05:00"}]}
default_plan: free
keys: [{name: acme, sha256: 1fbfd5e2a34698deb796eb78add256a067ec065519b8329b1eb85f5e2ef906d4, plan: ` + plan + `}] # demo-pro-key
`
	})
	acme := req{remote: "192.0.2.1:1", header: map[string]string{"X-API-Key": "demo-pro-key"}}
	free := handler("free")
	for range 5 {
		do(free, acme)
	}
	// pro's month is [1 March 05:00 UTC, 1 April 05:00 UTC): 21 days and
	// 17 hours (1,875,600 s) to go, and 5 already spent in it.
	w := do(handler("pro"), acme)
	if want := `"per-month";r=994;t=1875600`; w.Code != 200 || w.Header().Get("RateLimit") != want {
		t.Fatalf("upgraded to pro: %d %q, want 200 and %s (what free spent on 10 March still spent)", w.Code, w.Header().Get("RateLimit"), want)
	}
}
