package httplimit_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// jitterPlan is one plan, by IP, of a daily quota of 1 and a per-second
// limit of 5.
const jitterPlan = `
plans:
  p:
    limits:
      - {name: per-day, algorithm: fixed-window, quantity: 1, window: 24h}
      - {name: per-second, algorithm: fixed-window, quantity: 5, window: 1s}
default_plan: p
anonymous_plan: p
`

// jitterMiddleware serves jitterPlan (see jitterOn).
func jitterMiddleware(t *testing.T, clock *fakeClock, jitter time.Duration) http.Handler {
	return jitterOn(t, jitterPlan, clock, jitter)
}

// jitterOn serves the configuration plan with RetryJitter jitter, on a
// store and middleware clocked by clock.
func jitterOn(t *testing.T, plan string, clock *fakeClock, jitter time.Duration) http.Handler {
	t.Helper()
	cfg, err := config.Parse("jitter.yaml", []byte(plan))
	if err != nil {
		t.Fatal(err)
	}
	o := quiet(cfg)
	o.Clock, o.RetryJitter = clock.Now, jitter
	mw, err := httplimit.New(sluice.NewLimiter(memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))), o)
	if err != nil {
		t.Fatal(err)
	}
	return mw.Handler(okHandler())
}

var perDayT = regexp.MustCompile(`"per-day";r=(\d+);t=(\d+)`)

// perDay returns the per-day item's r and t of w's RateLimit header.
func perDay(t *testing.T, h http.Header) (r, tt int64) {
	t.Helper()
	m := perDayT.FindStringSubmatch(h.Get("RateLimit"))
	if m == nil {
		t.Fatalf("no per-day item in RateLimit: %q", h.Get("RateLimit"))
	}
	r, _ = strconv.ParseInt(m[1], 10, 64)
	tt, _ = strconv.ParseInt(m[2], 10, 64)
	return r, tt
}

func TestRetryJitterSpreadsClientsRefusedTogether(t *testing.T) {
	start := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	const exact = 12 * 3600 // until the day's window ends at midnight
	const jitter = 60
	const clients = 100
	ip := func(i int) string { return fmt.Sprintf("10.0.%d.%d:1000", i/250, i%250+1) }

	t.Run("without jitter every client is told the same moment", func(t *testing.T) {
		h := jitterMiddleware(t, clockAt(start), 0)
		for i := range clients {
			do(h, req{remote: ip(i)})
			w := do(h, req{remote: ip(i)})
			if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != strconv.Itoa(exact) {
				t.Fatalf("client %d: status %d, Retry-After %q; want 429, %d", i, w.Code, w.Header().Get("Retry-After"), exact)
			}
		}
	})

	clock := clockAt(start)
	h := jitterMiddleware(t, clock, jitter*time.Second)
	seen := map[int64]bool{}
	for i := range clients {
		first := do(h, req{remote: ip(i)})
		if first.Code != http.StatusOK {
			t.Fatalf("client %d: first request: status %d", i, first.Code)
		}
		r, t0 := perDay(t, first.Header())
		if r != 0 || t0 < exact || t0 > exact+jitter {
			t.Fatalf("client %d: admitted with per-day r=%d t=%d; want r=0 and t in [%d, %d]", i, r, t0, exact, exact+jitter)
		}
		w := do(h, req{remote: ip(i)})
		if w.Code != http.StatusTooManyRequests {
			t.Fatalf("client %d: second request: status %d, want 429", i, w.Code)
		}
		ra, err := strconv.ParseInt(w.Header().Get("Retry-After"), 10, 64)
		if err != nil || ra < exact || ra > exact+jitter {
			t.Fatalf("client %d: Retry-After %q, want in [%d, %d]", i, w.Header().Get("Retry-After"), exact, exact+jitter)
		}
		if _, tt := perDay(t, w.Header()); tt != ra || t0 != ra {
			t.Errorf("client %d: per-day t %d on the refusal and %d on the admission, Retry-After %d: all three are one moment", i, tt, t0, ra)
		}
		var body struct {
			RetryAfter   int64 `json:"retryAfter"`
			CurrentUsage struct {
				ResetsAt string `json:"resetsAt"`
			} `json:"currentUsage"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
			t.Fatal(err)
		}
		if want := start.Add(time.Duration(ra) * time.Second).Format(time.RFC3339); body.RetryAfter != ra || body.CurrentUsage.ResetsAt != want {
			t.Errorf("client %d: body retryAfter %d, resetsAt %s; want %d, %s (the headers' figures)", i, body.RetryAfter, body.CurrentUsage.ResetsAt, ra, want)
		}
		if again := do(h, req{remote: ip(i)}); again.Header().Get("Retry-After") != w.Header().Get("Retry-After") {
			t.Errorf("client %d: asked twice, told %s then %s", i, w.Header().Get("Retry-After"), again.Header().Get("Retry-After"))
		}
		seen[ra] = true
	}
	// 100 clients over 61 seconds: fewer than 30 distinct answers would be
	// a hash that does not spread them.
	if len(seen) < 30 {
		t.Errorf("%d clients refused together were told %d distinct moments; want them spread over the %d s", clients, len(seen), jitter)
	}

	t.Run("the exact moment still admits: the jitter is advice", func(t *testing.T) {
		clock.Advance(exact * time.Second)
		if w := do(h, req{remote: ip(0)}); w.Code != http.StatusOK {
			t.Fatalf("at the window's end: status %d, want 200", w.Code)
		}
	})
}

func TestRetryJitterIsATenthOfTheWindowAtMost(t *testing.T) {
	start := time.Date(2026, 12, 2, 12, 0, 30, 0, time.UTC)
	cases := []struct {
		name, limit string
		exact, most int64 // the exact wait and the most jitter, in seconds
	}{
		{"a per-second limit's clients are told the exact wait", "{name: per-second, algorithm: gcra, quantity: 1, window: 1s}", 1, 0},
		{"a per-minute limit's are spread over 6 s", "{name: per-minute, algorithm: fixed-window, quantity: 1, window: 1m}", 30, 6},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := jitterOn(t, "plans: {p: {limits: ["+c.limit+"]}}\ndefault_plan: p\nanonymous_plan: p\n", clockAt(start), time.Hour)
			seen := map[int64]bool{}
			for i := range 50 {
				ip := fmt.Sprintf("10.2.0.%d:1000", i+1)
				do(h, req{remote: ip})
				w := do(h, req{remote: ip})
				ra, err := strconv.ParseInt(w.Header().Get("Retry-After"), 10, 64)
				if w.Code != http.StatusTooManyRequests || err != nil || ra < c.exact || ra > c.exact+c.most {
					t.Fatalf("client %d: status %d, Retry-After %q; want 429 and [%d, %d]", i, w.Code, w.Header().Get("Retry-After"), c.exact, c.exact+c.most)
				}
				seen[ra] = true
			}
			if want := min(int(c.most)+1, 4); len(seen) < want {
				t.Errorf("50 clients were told %d distinct waits, want at least %d", len(seen), want)
			}
		})
	}
}

func TestRetryJitterValidates(t *testing.T) {
	cfg, err := config.Parse("jitter.yaml", []byte(jitterPlan))
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range []time.Duration{-time.Second, httplimit.MaxRetryJitter + time.Second} {
		o := quiet(cfg)
		o.RetryJitter = j
		var fe *httplimit.FieldError
		if err := o.Validate(); !errors.As(err, &fe) || fe.Field != "RetryJitter" {
			t.Errorf("RetryJitter %v: Validate = %v, want a FieldError of RetryJitter", j, err)
		}
	}
}
