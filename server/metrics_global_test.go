package server_test

import (
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
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
