package server_test

import (
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// sluice_global_remaining_ratio says, per global limit, the share of its
// burst left after the last request it admitted.
func TestGlobalRemainingRatio(t *testing.T) {
	f := newFixture(t, `
plans:
  free: {limits: [{name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m}]}
global:
  - {name: global, algorithm: fixed-window, quantity: 10, window: 1h}
`)
	for range 2 {
		if r := f.do(t, "GET", "/a", "", nil); r.StatusCode != 200 {
			t.Fatalf("request: %d", r.StatusCode)
		}
	}
	r := f.do(t, "GET", "/metrics", "", nil)
	b, _ := io.ReadAll(r.Body)
	if want := `sluice_global_remaining_ratio{limit="global"} 0.8`; !strings.Contains(string(b), want+"\n") {
		t.Errorf("/metrics lacks %q", want)
	}
	if strings.Contains(string(b), `sluice_global_remaining_ratio{limit="per-minute"}`) {
		t.Error("a plan's limit is exported as a global one")
	}
}

// A global limit that a reload removes or renames leaves
// sluice_global_remaining_ratio: a stale low ratio would keep
// SluiceGlobalLimitNearExhaustion firing for a limit no longer enforced. A
// limit the reload keeps keeps its series.
func TestGlobalRemainingRatioForgetsARemovedLimit(t *testing.T) {
	const cfg = `
plans:
  free: {limits: [{name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m}]}
global:
  - {name: global-kept, algorithm: fixed-window, quantity: 10, window: 1h}
  - {name: %s, algorithm: fixed-window, quantity: 10, window: 1h}
`
	f := newFixture(t, fmt.Sprintf(cfg, "global-old"))
	if r := f.do(t, "GET", "/a", "", nil); r.StatusCode != 200 {
		t.Fatalf("request: %d", r.StatusCode)
	}
	if err := os.WriteFile(f.file, []byte(fmt.Sprintf(cfg, "global-new")+testAdmin), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := f.srv.Reload(); err != nil {
		t.Fatal(err)
	}
	r := f.do(t, "GET", "/metrics", "", nil)
	b, _ := io.ReadAll(r.Body)
	if strings.Contains(string(b), `sluice_global_remaining_ratio{limit="global-old"}`) {
		t.Error("/metrics still has the removed global limit's ratio")
	}
	if want := `sluice_global_remaining_ratio{limit="global-kept"} 0.9`; !strings.Contains(string(b), want+"\n") {
		t.Errorf("/metrics lacks %q", want)
	}
	// The kept limit's series still moves.
	f.do(t, "GET", "/a", "", nil)
	r = f.do(t, "GET", "/metrics", "", nil)
	b, _ = io.ReadAll(r.Body)
	if want := `sluice_global_remaining_ratio{limit="global-kept"} 0.8`; !strings.Contains(string(b), want+"\n") {
		t.Errorf("after the reload, /metrics lacks %q", want)
	}
}

// sluice_global_remaining_ratio is what each global limit has left when
// Prometheus reads it, on memory and on Redis: 1 for a limit nothing has
// touched since the start, and 1 again once the window of the requests
// it admitted has passed with no request since — never the ratio of the
// last admission, which an idle instance would keep (and
// SluiceGlobalLimitNearExhaustion fire on) for ever.
func TestGlobalRemainingRatioIsReadWhenScraped(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		f := newFixture(t, `
plans:
  free: {limits: [{name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m}]}
global:
  - {name: global, algorithm: fixed-window, quantity: 10, window: 1h}
  - {name: global-log, algorithm: sliding-window-log, quantity: 4, window: 1m}
`, kind)
		ratios := func() (float64, float64, bool) {
			m := scrape(t, f.admin.URL)
			g, ok1 := m[`sluice_global_remaining_ratio{limit="global"}`]
			l, ok2 := m[`sluice_global_remaining_ratio{limit="global-log"}`]
			return g, l, ok1 && ok2
		}
		if g, l, ok := ratios(); !ok || g != 1 || l != 1 {
			t.Errorf("before any request: global %v, global-log %v (present: %v); want both 1", g, l, ok)
		}
		for range 2 {
			if r := f.do(t, "GET", "/a", "", nil); r.StatusCode != 200 {
				t.Fatalf("request: %d", r.StatusCode)
			}
		}
		if g, l, ok := ratios(); !ok || g != 0.8 || l != 0.5 {
			t.Errorf("after two requests: global %v, global-log %v (present: %v); want 0.8 and 0.5", g, l, ok)
		}
		f.clock.Advance(time.Minute + time.Second)
		if g, l, ok := ratios(); !ok || g != 0.8 || l != 1 {
			t.Errorf("a minute later: global %v, global-log %v (present: %v); want 0.8 (its hour goes on) and 1", g, l, ok)
		}
		f.clock.Advance(time.Hour)
		if g, l, ok := ratios(); !ok || g != 1 || l != 1 {
			t.Errorf("an hour later, no request since: global %v, global-log %v (present: %v); want both 1", g, l, ok)
		}
		if f.failover != nil {
			if st := f.failover.Stats(); st.StoreErrors != 0 {
				t.Errorf("store errors: %d", st.StoreErrors)
			}
		}
	})
}
