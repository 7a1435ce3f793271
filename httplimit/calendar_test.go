package httplimit_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// A monthly quota's headers state its quota and no window (a month has no
// one length), the seconds to the next month's first moment, and its
// refusal says "per month" and resets then: at the month's first moment,
// though t, rounded up from 59.6 s, says 60.
func TestCalendarQuotaHeadersAndRefusal(t *testing.T) {
	for _, mode := range []string{"ietf", "draft-7", "draft-6", "legacy"} {
		t.Run(mode, func(t *testing.T) {
			h, _ := setup(t, `
plans:
  free:
    limits:
      - {name: per-second, algorithm: gcra, quantity: 5, window: 1s}
      - {name: monthly, algorithm: fixed-window, quantity: 2, window: month}
default_plan: free
anonymous_plan: free
response:
  headers: [`+mode+`]
`, time.Date(2027, 2, 28, 23, 59, 0, 4e8, time.UTC)) // 59.6 s before March: t=60, the reset at 00:00:00, not a second after
			first := do(h, req{remote: "192.0.2.1:1"})
			switch mode {
			case "ietf":
				if got := first.Header().Get("RateLimit-Policy"); got != `"per-second";q=5;w=1, "monthly";q=2` {
					t.Errorf("RateLimit-Policy: %s", got)
				}
				if got := first.Header().Get("RateLimit"); got != `"per-second";r=4;t=1, "monthly";r=1;t=60` {
					t.Errorf("RateLimit: %s", got)
				}
			case "draft-7":
				if got := first.Header().Get("RateLimit"); got != "limit=2, remaining=1, reset=60" {
					t.Errorf("RateLimit: %s", got)
				}
				if got := first.Header().Get("RateLimit-Policy"); got != "5;w=1, 2" {
					t.Errorf("RateLimit-Policy: %s", got)
				}
			}
			do(h, req{remote: "192.0.2.1:1"})
			w := do(h, req{remote: "192.0.2.1:1"})
			if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "60" {
				t.Fatalf("third request: %d, Retry-After %q; want 429 until March", w.Code, w.Header().Get("Retry-After"))
			}
			if mode == "legacy" {
				if got, want := w.Header().Get("X-RateLimit-Reset"), time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC).Unix(); got != strconv.FormatInt(want, 10) {
					t.Errorf("X-RateLimit-Reset: %s", got)
				}
			}
			var body struct {
				Detail       string `json:"detail"`
				Window       string `json:"window"`
				CurrentUsage struct {
					Window   string `json:"window"`
					ResetsAt string `json:"resetsAt"`
				} `json:"currentUsage"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(body.Detail, "Rate limit exceeded: 2 requests per month on the free plan.") ||
				body.Window != "month" || body.CurrentUsage.Window != "month" || body.CurrentUsage.ResetsAt != "2027-03-01T00:00:00Z" {
				t.Errorf("body %+v", body)
			}
		})
	}
}

// A client moved to another plan mid-month (its key's plan changed, the
// configuration reloaded) keeps what it spent this month: limits of one
// name and algorithm share their state.
func TestAnUpgradeKeepsTheMonthsUsage(t *testing.T) {
	text := func(plan string) string {
		return `
identity: {api_key_headers: [X-API-Key]}
plans:
  free: {limits: [{name: per-month, algorithm: fixed-window, quantity: 5, window: month}]}
  pro: {limits: [{name: per-month, algorithm: fixed-window, quantity: 1000, window: month}]}
default_plan: free
keys: [{name: acme, sha256: 1fbfd5e2a34698deb796eb78add256a067ec065519b8329b1eb85f5e2ef906d4, plan: ` + plan + `}] # demo-pro-key
`
	}
	clock := clockAt(time.Date(2027, 3, 10, 12, 0, 0, 0, time.UTC))
	store := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
	defer store.Close()
	limiter := sluice.NewLimiter(store)
	handler := func(plan string) http.Handler {
		cfg, err := config.Parse("t.yaml", []byte(text(plan)))
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
	acme := req{remote: "192.0.2.1:1", header: map[string]string{"X-API-Key": "demo-pro-key"}}
	free := handler("free")
	for range 5 {
		do(free, acme)
	}
	if w := do(free, acme); w.Code != 429 {
		t.Fatalf("free, 6th request this month: %d", w.Code)
	}
	if w := do(handler("pro"), acme); w.Code != 200 || w.Header().Get("RateLimit") != `"per-month";r=994;t=1857600` {
		t.Fatalf("upgraded to pro: %d %q, want 200 and what free spent still spent", w.Code, w.Header().Get("RateLimit"))
	}
}
