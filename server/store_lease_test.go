package server_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/server"
)

// leasingServer is sluice serve on rs with store.redis.lease: auto, the
// given store timeout and one limit of 100,000 an hour; it returns the
// server and the registry its metrics are in.
func leasingServer(t *testing.T, rs *redistest.Server, timeout string) (*server.Server, *prometheus.Registry) {
	t.Helper()
	clearOfHourEnd(t, 5*time.Second)
	up := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(up.Close)
	file := filepath.Join(t.TempDir(), "sluice.yaml")
	text := "upstream: " + up.URL + "\nstore:\n  type: redis\n  redis: {addresses: [\"" + rs.Addr + "\"], timeout: " + timeout + ", lease: auto}\n" +
		"plans:\n  free:\n    limits:\n      - {name: per-hour, algorithm: fixed-window, quantity: 100000, window: 1h}\n" + testAdmin
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	opened, err := server.OpenStore(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { opened.Close() })
	if opened.Leases == nil {
		t.Fatal("lease: auto opened a store without leases")
	}
	reg := prometheus.NewRegistry()
	srv, err := server.New(server.Options{Config: cfg, Store: opened.Store, Ready: opened.Ready, Registry: reg,
		Failover: opened.Failover, OverLimit: opened.Cache, Leases: opened.Leases,
		Load: func() (*config.Config, error) { return config.Load(file) }})
	if err != nil {
		t.Fatal(err)
	}
	return srv, reg
}

// clearOfHourEnd waits, when the wall clock is less than margin before
// the end of an hour, until that hour has ended. A lease of a fixed window
// ends with its window, so a test that reads the units it holds must not
// run across a window's end: its windows are an hour long, and it starts
// at least margin before the next one.
func clearOfHourEnd(t *testing.T, margin time.Duration) {
	t.Helper()
	now := time.Now()
	if left := now.Truncate(time.Hour).Add(time.Hour).Sub(now); left < margin {
		t.Logf("waiting %v for the hour's window to end", left)
		time.Sleep(left + 10*time.Millisecond)
	}
}

// getFrom sends h a GET /a from the client at addr and returns its status.
func getFrom(h http.Handler, addr string) int {
	w := httptest.NewRecorder()
	r := httptest.NewRequest("GET", "/a", nil)
	r.RemoteAddr = addr + ":1234"
	h.ServeHTTP(w, r)
	return w.Code
}

// With store.redis.lease: auto, sluice serve decides most requests from
// quota leased from Redis, exports what the leases did, and gives the
// units it holds back to Redis on a reload.
func TestServerLeasesQuota(t *testing.T) {
	srv, reg := leasingServer(t, redistest.Standalone(t), "1s")
	h := srv.PublicHandler()
	for i := range 200 {
		if code := getFrom(h, "198.51.100.7"); code != 200 {
			t.Fatalf("request %d: %d", i, code)
		}
	}
	got := gatheredSeries(t, reg)
	if got[`sluice_lease_decisions_total{path="local"}`] < 100 || got[`sluice_lease_takes_total`] < 1 {
		t.Errorf("200 requests of one client: %v local decisions, %v takes; want most decided from a lease",
			got[`sluice_lease_decisions_total{path="local"}`], got[`sluice_lease_takes_total`])
	}
	if got[`sluice_lease_units_held`] <= 0 {
		t.Fatalf("no units held after the requests: %v", got)
	}
	if err := srv.Reload(); err != nil {
		t.Fatal(err)
	}
	got = gatheredSeries(t, reg)
	if got[`sluice_lease_units_held`] != 0 || got[`sluice_lease_units_total{event="returned"}`] <= 0 {
		t.Errorf("after a reload: %v units held, %v returned; want every unit given back",
			got[`sluice_lease_units_held`], got[`sluice_lease_units_total{event="returned"}`])
	}
}

// sluice_lease_prefetches_total counts the takes started at a lease's low
// water, and sluice_lease_takes_in_flight the takes Redis has not answered
// yet: one while a client's request waits for its lease on a paused Redis,
// none once Redis answers.
func TestLeaseMetricsCountPrefetchesAndTakesInFlight(t *testing.T) {
	rs := redistest.Standalone(t)
	srv, reg := leasingServer(t, rs, "10s")
	h := srv.PublicHandler()
	for i := 0; gatheredSeries(t, reg)["sluice_lease_prefetches_total"] == 0; i++ {
		if i == 2000 {
			t.Fatalf("2,000 requests of one client and no take at low water: %v", gatheredSeries(t, reg))
		}
		if code := getFrom(h, "198.51.100.7"); code != 200 {
			t.Fatalf("request %d: %d", i, code)
		}
	}
	waitForSeries(t, reg, "sluice_lease_takes_in_flight", 0)

	// A new client's first request takes a lease: on a paused Redis it
	// waits for it.
	rs.Pause()
	t.Cleanup(rs.Resume)
	done := make(chan int, 1)
	go func() { done <- getFrom(h, "198.51.100.8") }()
	waitForSeries(t, reg, "sluice_lease_takes_in_flight", 1)
	rs.Resume()
	if code := <-done; code != 200 {
		t.Fatalf("the request that waited for its take: %d", code)
	}
	waitForSeries(t, reg, "sluice_lease_takes_in_flight", 0)
}

// waitForSeries waits up to 5 s for reg's series name to read want.
func waitForSeries(t *testing.T, reg *prometheus.Registry, name string, want float64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, ok := gatheredSeries(t, reg)[name]
		if ok && got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s is %v (exported: %v) after 5 s, want %v", name, got, ok, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// gatheredSeries returns every series of reg as name{label="value"} → value.
func gatheredSeries(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+`="`+l.GetValue()+`"`)
			}
			name := mf.GetName()
			if len(labels) > 0 {
				name += "{" + strings.Join(labels, ",") + "}"
			}
			switch {
			case m.GetCounter() != nil:
				out[name] = m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				out[name] = m.GetGauge().GetValue()
			}
		}
	}
	return out
}

// A reload that sets lease: off on a limit the running store leases, and
// count: failures on it, is refused at the count: with the old
// configuration kept: the store's leases are those it opened with until
// the next start, and a unit admitted from a lease cannot be refunded.
func TestReloadRefusesCountOnLimitTheRunningStoreLeases(t *testing.T) {
	rs := redistest.Standalone(t)
	srv, _ := leasingServer(t, rs, "1s")
	file := srv.Config().File
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(data), "window: 1h}", "window: 1h, lease: off, count: failures}", 1)
	if text == string(data) {
		t.Fatal("the test's file has no limit to change")
	}
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := config.Load(file); err != nil {
		t.Fatalf("the new file alone is valid, but: %v", err)
	}
	err = srv.Reload()
	if err == nil {
		t.Fatal("reload accepted count: failures on a limit the running store leases")
	}
	errs := config.Errors(err)
	if len(errs) != 1 || errs[0].Path != "plans.free.limits[0].count" || errs[0].Line == 0 || !strings.Contains(errs[0].Msg, "next start") {
		t.Errorf("refused with %v; want it located at plans.free.limits[0].count, saying the leases change at the next start", err)
	}
	if got := srv.Config().Count; len(got) != 0 {
		t.Errorf("the configuration in force counts %v; want the old one kept", got)
	}
}

// sluice_lease_units_total{event="lost"} counts the units of leases that
// ended with the state that counted them (Redis back without its data),
// and sluice_lease_failures_total the takes Redis failed (here, on a
// paused Redis, one that did not answer within the store's timeout).
func TestLeaseMetricsCountLostUnitsAndFailedTakes(t *testing.T) {
	rs := redistest.Standalone(t)
	srv, reg := leasingServer(t, rs, "200ms")
	h := srv.PublicHandler()
	for i := range 200 {
		if code := getFrom(h, "198.51.100.7"); code != 200 {
			t.Fatalf("request %d: %d", i, code)
		}
	}
	rs.Pause()
	getFrom(h, "198.51.100.9") // a new client's take, which Redis does not answer
	rs.Resume()
	if got := gatheredSeries(t, reg)["sluice_lease_failures_total"]; got < 1 {
		t.Errorf("sluice_lease_failures_total = %v after a take a paused Redis did not answer, want ≥ 1", got)
	}

	if got := gatheredSeries(t, reg)["sluice_lease_units_held"]; got <= 0 {
		t.Fatalf("no units held before the restart: %v", got)
	}
	rs.Restart()
	deadline := time.Now().Add(10 * time.Second)
	for gatheredSeries(t, reg)[`sluice_lease_units_total{event="lost"}`] == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no lost units counted 10 s after Redis came back empty: %v", gatheredSeries(t, reg))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
