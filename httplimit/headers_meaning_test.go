package httplimit_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dunglas/httpsfv"
)

// The misbehaviours of issue 21, each as the client reading the headers
// meets it: q is what the policy allocates and r what remains of it, t the
// time until more is available (never past w), and a 429 says the same
// figures in its headers and its body.

// ietfItems parses a RateLimit or RateLimit-Policy value with httpsfv into
// each policy's parameters.
func ietfItems(t testing.TB, value string) map[string]map[string]int64 {
	t.Helper()
	list, err := httpsfv.UnmarshalList([]string{value})
	if err != nil {
		t.Fatalf("%q is no sf-list: %v", value, err)
	}
	out := map[string]map[string]int64{}
	for _, m := range list {
		it, ok := m.(httpsfv.Item)
		name, isString := it.Value.(string)
		if !ok || !isString {
			t.Fatalf("%q: member %v is no string item", value, m)
		}
		params := map[string]int64{}
		for _, k := range it.Params.Names() {
			v, _ := it.Params.Get(k)
			if n, ok := v.(int64); ok {
				params[k] = n
			}
		}
		out[name] = params
	}
	return out
}

// The example's free plan and global limit are buckets whose burst is twice
// their rate: a client that reads q=5 beside r=9 computes a negative use.
func TestBucketPolicyStatesItsBurstAsTheQuota(t *testing.T) {
	h, _ := setup(t, exampleConfig(t), noon)
	w := do(h, req{header: map[string]string{"Authorization": "Bearer demo-free-key"}})
	policy := ietfItems(t, w.Header().Get("RateLimit-Policy"))
	limit := ietfItems(t, w.Header().Get("RateLimit"))
	for name, want := range map[string][2]int64{"per-second": {10, 2}, "global": {10000, 2}} {
		if p := policy[name]; p["q"] != want[0] || p["w"] != want[1] {
			t.Errorf("%s: RateLimit-Policy q=%d w=%d, want q=%d w=%d (burst b refilled at Q per W: w=b·W/Q)",
				name, p["q"], p["w"], want[0], want[1])
		}
		if r := limit[name]["r"]; r > policy[name]["q"] {
			t.Errorf("%s: r=%d above q=%d", name, r, policy[name]["q"])
		}
	}
}

// burstyBucket is a token bucket whose burst is twice its rate, as the
// example configuration's per-second and global limits are.
const burstyBucket = `
plans:
  p:
    limits:
      - {name: per-second, algorithm: token-bucket, quantity: 5, window: 1s, burst: 10}
`

// untilRefused sends requests until one is refused (at most 21) and
// returns the last answer.
func untilRefused(h http.Handler) *httptest.ResponseRecorder {
	w := do(h, req{})
	for i := 0; w.Code == 200 && i < 20; i++ {
		w = do(h, req{})
	}
	return w
}

// After a burst a token bucket refuses; its Retry-After is never earlier
// than the violated policy's t, and sleeping it admits.
func TestRetryAfterIsNotEarlierThanTheViolatedT(t *testing.T) {
	h, clock := setup(t, burstyBucket, noon)
	w := untilRefused(h)
	if w.Code != 429 {
		t.Fatalf("never refused: %d", w.Code)
	}
	ra, err := strconv.ParseInt(w.Header().Get("Retry-After"), 10, 64)
	if err != nil {
		t.Fatalf("Retry-After %q", w.Header().Get("Retry-After"))
	}
	item := ietfItems(t, w.Header().Get("RateLimit"))["per-second"]
	if item["t"] > ra {
		t.Errorf("Retry-After %d is earlier than the violated per-second's t=%d", ra, item["t"])
	}
	if ra != 1 || item["t"] != 1 {
		t.Errorf("Retry-After %d, t=%d: want 1 and 1 (a token refills in 200 ms)", ra, item["t"])
	}
	clock.Advance(time.Duration(ra) * time.Second)
	if w := do(h, req{}); w.Code != 200 {
		t.Errorf("after sleeping Retry-After: %d", w.Code)
	}
}

// A sliding counter's t is never past its window: the issue saw 64 to 98 s
// on a 60 s window and about 28.5 h on a daily one.
func TestSlidingCounterTIsWithinItsWindow(t *testing.T) {
	for _, tc := range []struct {
		window string
		w      int64
	}{{"1m", 60}, {"24h", 86400}} {
		h, clock := setup(t, `
plans:
  p:
    limits:
      - {name: l, algorithm: sliding-window-counter, quantity: 100, window: `+tc.window+`}
`, noon)
		// Spend in one window, then look at the next, where the count
		// just spent is weighted as the previous window's.
		for range 3 {
			for range 10 {
				do(h, req{})
			}
			clock.Advance(time.Duration(tc.w) * time.Second / 3)
		}
		for range 3 {
			w := do(h, req{})
			policy := ietfItems(t, w.Header().Get("RateLimit-Policy"))["l"]
			item := ietfItems(t, w.Header().Get("RateLimit"))["l"]
			if policy["w"] != tc.w || item["t"] > policy["w"] || item["r"] > policy["q"] {
				t.Errorf("window %s: policy %v, RateLimit %v: want t ≤ w=%d, r ≤ q", tc.window, policy, item, tc.w)
			}
			clock.Advance(time.Duration(tc.w) * time.Second / 4)
		}
	}
}

// The 429 body's figures are the headers': the deciding policy's q, the
// use q − r, and resetsAt the time more is available, rounded up once.
func TestRefusalBodyCarriesTheHeadersFigures(t *testing.T) {
	h, clock := setup(t, burstyBucket, noon)
	clock.Advance(300 * time.Millisecond) // resetsAt must round up, not down
	w := untilRefused(h)
	p := decodeProblem(t, w.Body.String())
	policy := ietfItems(t, w.Header().Get("RateLimit-Policy"))["per-second"]
	item := ietfItems(t, w.Header().Get("RateLimit"))["per-second"]
	if p.Limit != policy["q"] || p.CurrentUsage == nil || p.CurrentUsage.Limit != policy["q"] ||
		p.CurrentUsage.Used != policy["q"]-item["r"] {
		t.Fatalf("body limit %d, currentUsage %+v; headers q=%d r=%d", p.Limit, p.CurrentUsage, policy["q"], item["r"])
	}
	if p.Window != "2s" || p.CurrentUsage.Window != "2s" {
		t.Errorf("body window %q / %q, want the policy's w=2 as 2s", p.Window, p.CurrentUsage.Window)
	}
	// The burst of 10 is spent at 12:00:00.3; 5 a second bring a unit back
	// 200 ms later, at 12:00:00.5: rounded up, 12:00:01 (now + t, also
	// rounded up, would say 12:00:02).
	if want := "2026-11-30T12:00:01Z"; p.CurrentUsage.ResetsAt != want || item["t"] != 1 {
		t.Errorf("resetsAt %s with t=%d, want %s with t=1", p.CurrentUsage.ResetsAt, item["t"], want)
	}
	if p.Policy != "per-second" {
		t.Errorf("body policy %q, want the deciding per-second", p.Policy)
	}
	if !strings.Contains(p.Detail, "5 requests per second") || !strings.Contains(p.Detail, "10 at once") {
		t.Errorf("detail %q: want the rate and the burst", p.Detail)
	}
}
