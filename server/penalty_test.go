package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/internal/realtest"
)

// TestPenaltyBoxThroughTheProxy: on memory and Redis, a client refused
// twice within a minute is refused for 5 minutes with the box's problem
// type, though its quota is back, and admitted once they are over; the box
// counts in sluice_decisions_total as limit "penalty".
func TestPenaltyBoxThroughTheProxy(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		cfg := realtest.Replace(t, "testConfig", testConfig, "exempt:", "penalty: {refusals: 2, within: 1m, for: 5m}\nexempt:")
		f := newFixture(t, cfg, kind)
		for range 5 { // 3 admitted, 2 refused: boxed
			f.do(t, "GET", "/api/search", "", nil)
		}
		f.clock.Advance(2 * time.Minute)
		r := f.do(t, "GET", "/api/search", "", nil)
		body := readAll(t, r)
		if r.StatusCode != 429 || r.Header.Get("Retry-After") != "180" || !strings.Contains(body, `"type":"https://github.com/sluice-dev/sluice/blob/main/docs/rules.md#penalty-box"`) {
			t.Fatalf("boxed: %d %q %s", r.StatusCode, r.Header.Get("Retry-After"), body)
		}
		f.clock.Advance(3 * time.Minute)
		if r := f.do(t, "GET", "/api/search", "", nil); r.StatusCode != 200 {
			t.Errorf("after the box: %d", r.StatusCode)
		}
		if n := f.hits.Load(); n != 4 {
			t.Errorf("upstream saw %d requests, want 4", n)
		}
		metrics := readAll(t, f.do(t, "GET", "/metrics", "", nil))
		if !strings.Contains(metrics, `sluice_decisions_total{limit="penalty",policy="free",result="limited"} 1`) {
			t.Errorf("metrics:\n%s", grepLines(metrics, "decisions_total"))
		}
		f.noStoreErrors(t)
	})
}
