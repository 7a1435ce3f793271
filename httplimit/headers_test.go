package httplimit_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/dunglas/httpsfv"
)

var noon = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func TestIETFHeadersDraft11(t *testing.T) {
	h, clock := setup(t, `
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m}
      - {name: per-day, algorithm: fixed-window, quantity: 1000, window: 24h}
`, noon)
	clock.Advance(42 * time.Second)
	var last map[string][]string
	for range 58 {
		w := do(h, req{})
		if w.Code != 200 {
			t.Fatalf("status %d", w.Code)
		}
		last = w.Header()
	}
	// A per-minute and a per-day policy, as in the IETF draft's examples, with the day limit's own values.
	wantPolicy := `"per-minute";q=100;w=60, "per-day";q=1000;w=86400`
	wantLimit := `"per-minute";r=42;t=18, "per-day";r=942;t=43158`
	if got := last["Ratelimit-Policy"]; len(got) != 1 || got[0] != wantPolicy {
		t.Errorf("RateLimit-Policy = %q, want %q", got, wantPolicy)
	}
	if got := last["Ratelimit"]; len(got) != 1 || got[0] != wantLimit {
		t.Errorf("RateLimit = %q, want %q", got, wantLimit)
	}
	// Both parse as Structured Field lists with the draft's parameters.
	for _, name := range []string{"Ratelimit-Policy", "Ratelimit"} {
		l, err := httpsfv.UnmarshalList(last[name])
		if err != nil || len(l) != 2 {
			t.Fatalf("%s does not parse as an sf-list: %v", name, err)
		}
		item := l[0].(httpsfv.Item)
		if item.Value != "per-minute" {
			t.Errorf("%s first item %v", name, item.Value)
		}
	}
}

func TestDraft6And7AsExpressRateLimitDocuments(t *testing.T) {
	// express-rate-limit's documented output for a 5-per-minute limit after
	// one request: ratelimit-policy: 5;w=60 / ratelimit: limit=5, remaining=4, reset=60.
	conf := func(mode string) string {
		return `
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 5, window: 1m}
response:
  headers: [` + mode + `]
`
	}
	h, _ := setup(t, conf("draft-7"), noon)
	w := do(h, req{})
	if got := w.Header().Get("RateLimit-Policy"); got != "5;w=60" {
		t.Errorf("draft-7 RateLimit-Policy = %q", got)
	}
	if got := w.Header().Get("RateLimit"); got != "limit=5, remaining=4, reset=60" {
		t.Errorf("draft-7 RateLimit = %q", got)
	}

	h, _ = setup(t, conf("draft-6"), noon)
	w = do(h, req{})
	for name, want := range map[string]string{"RateLimit-Policy": "5;w=60", "RateLimit-Limit": "5",
		"RateLimit-Remaining": "4", "RateLimit-Reset": "60"} {
		if got := w.Header().Get(name); got != want {
			t.Errorf("draft-6 %s = %q, want %q", name, got, want)
		}
	}

	h, _ = setup(t, conf("legacy"), noon)
	w = do(h, req{})
	for name, want := range map[string]string{"X-RateLimit-Limit": "5", "X-RateLimit-Remaining": "4",
		"X-RateLimit-Reset": strconv.FormatInt(noon.Add(time.Minute).Unix(), 10)} { // the window's end
		if got := w.Header().Get(name); got != want {
			t.Errorf("legacy %s = %q, want %q", name, got, want)
		}
	}
}

// With every limit hidden (a source that sent no headers, as an import
// from Kong's hide_client_headers writes it) neither RateLimit nor
// RateLimit-Policy is sent, not even empty; a refusal keeps Retry-After.
func TestEveryLimitHiddenSendsNoRateLimitField(t *testing.T) {
	h, _ := setup(t, `
plans:
  p:
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 1, window: 1m}]
default_plan: p
anonymous_plan: p
response: {hide: [per-minute]}
`, time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC))
	for i, want := range []int{http.StatusOK, http.StatusTooManyRequests} {
		w := do(h, req{})
		if w.Code != want {
			t.Fatalf("request %d: status %d, want %d", i+1, w.Code, want)
		}
		for _, name := range []string{"Ratelimit", "Ratelimit-Policy"} {
			if v, ok := w.Header()[name]; ok {
				t.Errorf("request %d: %s: %q sent", i+1, name, v)
			}
		}
	}
	if w := do(h, req{}); w.Header().Get("Retry-After") != "60" {
		t.Errorf("refusal: Retry-After %q, want 60", w.Header().Get("Retry-After"))
	}
}
