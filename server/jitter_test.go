package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// response.retry_jitter reaches every answer of the server: clients of an
// hourly quota refused together through the proxy are told to come back
// over up to 5 minutes past the hour's end (in
// Retry-After and the RateLimit t alike), never before it; the decision
// API tells a caller the same later wait in retryAfter and its headers;
// /docs says so.
func TestRetryJitterThroughTheServer(t *testing.T) {
	const cfg = `
identity:
  trusted_proxies: [127.0.0.1/32]
plans:
  free:
    limits:
      - {name: per-hour, algorithm: fixed-window, quantity: 1, window: 1h}
response:
  retry_jitter: 5m
`
	const exact, jitter = 1800, 300 // at 12:30, the hour's window ends at 13:00
	eachStore(t, func(t *testing.T, kind string) {
		f := newFixture(t, cfg, kind)
		f.clock.Advance(30 * time.Minute)
		seen := map[int64]bool{}
		for i := range 30 {
			h := map[string]string{"X-Forwarded-For": fmt.Sprintf("203.0.113.%d", i+1)}
			if r := f.do(t, "GET", "/api/items", "", h); r.StatusCode != http.StatusOK {
				t.Fatalf("client %d: first request: %d", i, r.StatusCode)
			}
			r := f.do(t, "GET", "/api/items", "", h)
			ra, err := strconv.ParseInt(r.Header.Get("Retry-After"), 10, 64)
			if r.StatusCode != http.StatusTooManyRequests || err != nil || ra < exact || ra > exact+jitter {
				t.Fatalf("client %d: %d, Retry-After %q; want 429 and [%d, %d]", i, r.StatusCode, r.Header.Get("Retry-After"), exact, exact+jitter)
			}
			if want := fmt.Sprintf(`"per-hour";r=0;t=%d`, ra); r.Header.Get("RateLimit") != want {
				t.Errorf("client %d: RateLimit %q, want %s", i, r.Header.Get("RateLimit"), want)
			}
			seen[ra] = true
		}
		if len(seen) < 10 {
			t.Errorf("30 clients refused together were told %d distinct waits; want them spread", len(seen))
		}

		body := `{"subject":"batch-7","method":"GET","path":"/api/items"}`
		f.do(t, "POST", "/v1/check", body, nil)
		var out struct {
			Allowed      bool              `json:"allowed"`
			RetryAfter   int64             `json:"retryAfter"`
			RetryAfterMs int64             `json:"retryAfterMs"`
			Headers      map[string]string `json:"headers"`
		}
		if err := json.NewDecoder(f.do(t, "POST", "/v1/check", body, nil).Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		if out.Allowed || out.RetryAfter < exact || out.RetryAfter > exact+jitter || out.RetryAfterMs > out.RetryAfter*1000 ||
			out.Headers["Ratelimit"] != fmt.Sprintf(`"per-hour";r=0;t=%d`, out.RetryAfter) {
			t.Errorf("/v1/check: %+v; want refused, retryAfter in [%d, %d] and the headers' t", out, exact, exact+jitter)
		}
		f.noStoreErrors(t)
	})
	page := readAll(t, newFixture(t, cfg).do(t, "GET", "/docs", "", nil))
	if !strings.Contains(page, "up to 5m later") {
		t.Error("/docs does not tell the jitter")
	}
}

// With a retry jitter, the 503s of a shedding server spread their clients'
// return over up to as much again as degradation.retry_after (here 10 s to
// 20 s), rather than all of them at once.
func TestRetryJitterSpreadsShedClients(t *testing.T) {
	cfg := strings.Replace(degradeConfig, "retry_after: 2s", "retry_after: 10s", 1) + "response:\n  retry_jitter: 30s\n"
	f := newFixture(t, cfg)
	if r := f.do(t, "PUT", "/v1/degradation", `{"level":"critical"}`, nil); r.StatusCode != http.StatusOK {
		t.Fatalf("pin: %d", r.StatusCode)
	}
	seen := map[int64]bool{}
	for i := range 40 {
		r := f.do(t, "GET", "/api/items", "", nil)
		readAll(t, r)
		ra, err := strconv.ParseInt(r.Header.Get("Retry-After"), 10, 64)
		if r.StatusCode != http.StatusServiceUnavailable || err != nil || ra < 10 || ra > 20 {
			t.Fatalf("request %d: %d, Retry-After %q; want 503 and [10, 20]", i, r.StatusCode, r.Header.Get("Retry-After"))
		}
		seen[ra] = true
	}
	if len(seen) < 5 {
		t.Errorf("40 shed requests were told %d distinct waits; want them spread", len(seen))
	}
	if page := readAll(t, f.do(t, "GET", "/docs", "", nil)); !strings.Contains(page, "(here 10 to 20, so that clients shed together do not return together)") {
		t.Error("/docs does not tell the spread of a 503's wait")
	}
}
