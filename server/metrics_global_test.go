package server_test

import (
	"io"
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
