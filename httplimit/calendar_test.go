package httplimit_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A monthly quota's headers state its quota and no window (a month has no
// one length), the seconds to the next month's first moment, and its
// refusal says "per month" and resets then.
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
`, time.Date(2027, 2, 28, 23, 59, 0, 0, time.UTC)) // a minute before March
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
