package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/server"
)

// At a degradation level the limits of windows up to factor_max_window
// are reduced (× factor, 0.5 by default): a quota of 4 an hour is 2 there.
// The client still pays for 4, so notify judges shares against the
// configured quota, never the reduced one: 2 used at level 1 is half of
// the quota, told as 50% once back at the normal level with the next
// decision, not as 100% (which, told once per window, would also keep the
// real 100% from being told).
func TestNotifyJudgesTheConfiguredQuotaNotADegradedOne(t *testing.T) {
	hook := &hookReceiver{}
	hs := httptest.NewServer(hook)
	defer hs.Close()
	f := newFixtureOn(t, `
plans:
  free:
    limits: [{name: per-hour, algorithm: fixed-window, quantity: 4, window: 1h}]
default_plan: free
anonymous_plan: free
notify:
  url: `+hs.URL+`
  at: [50, 100]
  limits: [per-hour]
degradation:
  levels:
    elevated: {enter: {in_flight: 1000}, leave: {in_flight: 900}}
`, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	pin := func(level string) {
		t.Helper()
		resp := f.do(t, "PUT", "/v1/degradation", `{"level":"`+level+`"}`, nil)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("pin %s: %d", level, resp.StatusCode)
		}
	}
	pin("elevated")
	for range 2 {
		if r := f.do(t, "GET", "/api/items", "", nil); r.StatusCode != http.StatusOK {
			t.Fatalf("at level 1: %d", r.StatusCode)
		}
	}
	time.Sleep(50 * time.Millisecond)
	if _, n := hook.counts(); n != 0 {
		bodies, _ := hook.waitFor(t, n)
		t.Fatalf("told at level 1, judged against the reduced quota: %q", bodies)
	}
	pin("normal")
	for range 2 {
		f.do(t, "GET", "/api/items", "", nil)
	}
	bodies, _ := hook.waitFor(t, 2)
	for i, at := range []int{50, 100} {
		var n server.Notification
		if err := json.Unmarshal([]byte(bodies[i]), &n); err != nil {
			t.Fatal(err)
		}
		if n.At != at || n.Quota != 4 || n.Used != int64(3+i) {
			t.Errorf("notification %d: %+v, want %d%% of 4 (%d used)", i, n, at, 3+i)
		}
	}
}
