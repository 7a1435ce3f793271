package server_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/degrade"
)

// intervalConfig is a degradation section sampled every INTERVAL whose
// level 1 is entered by one request in flight.
const intervalConfig = `
plans:
  free:
    limits:
      - {name: per-second, algorithm: gcra, quantity: 100000, window: 1s}
degradation:
  interval: INTERVAL
  min_dwell: 1m
  levels:
    elevated: {enter: {in_flight: 1}}
`

// startSampledEvery serves intervalConfig at interval in front of an
// upstream that holds each request until the test ends, and returns the
// server, its public address, the configuration's file and a channel that
// receives each request the upstream holds.
func startSampledEvery(t *testing.T, interval string) (srv interface {
	Reload() error
	Degradation() degrade.State
}, base, file string, held chan struct{}) {
	t.Helper()
	release := make(chan struct{})
	held = make(chan struct{}, 16)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		held <- struct{}{}
		<-release
	}))
	t.Cleanup(up.Close)
	s, file := loadServer(t, t.TempDir(), "upstream: "+up.URL+"\n"+strings.Replace(intervalConfig, "INTERVAL", interval, 1)+testAdmin)
	l := serveOn(t, s)
	t.Cleanup(func() { close(release) }) // before the server drains
	return s, "http://" + l.public, file, held
}

// hold sends a request that the upstream holds, and returns once it does.
func hold(t *testing.T, base string, held chan struct{}) {
	t.Helper()
	go func() {
		if resp, err := http.Get(base + "/api/x"); err == nil {
			resp.Body.Close()
		}
	}()
	select {
	case <-held:
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream never got the request")
	}
}

// reloadInterval rewrites the interval of the configuration in file and
// reloads it.
func reloadInterval(t *testing.T, srv interface{ Reload() error }, file, from, to string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "interval: "+from+"\n") {
		t.Fatalf("the configuration has no interval %s", from)
	}
	if err := os.WriteFile(file, []byte(strings.Replace(string(b), "interval: "+from+"\n", "interval: "+to+"\n", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := srv.Reload(); err != nil {
		t.Fatal(err)
	}
}

// A reload that shortens degradation.interval applies at once: the loop
// that waited out the old interval (a minute) samples at the new one (10ms)
// from the reload on, not once the old wait has ended.
func TestDegradationIntervalShortenedByAReloadAppliesAtOnce(t *testing.T) {
	srv, base, file, held := startSampledEvery(t, "1m")
	hold(t, base, held) // one in flight: the next sample enters elevated
	time.Sleep(50 * time.Millisecond)
	if got := srv.Degradation().Level; got != degrade.Normal {
		t.Fatalf("before the reload, within the 1m interval: %v, want Normal (no sample yet)", got)
	}
	reloadInterval(t, srv, file, "1m", "10ms")
	deadline := time.Now().Add(5 * time.Second)
	for srv.Degradation().Level != degrade.Elevated && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := srv.Degradation().Level; got != degrade.Elevated {
		t.Errorf("5s after a reload to a 10ms interval: %v, want Elevated (sampled at the new interval)", got)
	}
}

// A reload that lengthens degradation.interval applies too: from 10ms to a
// minute, the loop samples no more until a minute after its last sample
// (woken by the reload, it does not go on at the old interval).
func TestDegradationIntervalLengthenedByAReloadApplies(t *testing.T) {
	srv, base, file, held := startSampledEvery(t, "10ms")
	time.Sleep(50 * time.Millisecond) // a few samples at 10ms
	reloadInterval(t, srv, file, "10ms", "1m")
	time.Sleep(50 * time.Millisecond) // a sample the reload came in the middle of
	hold(t, base, held)
	time.Sleep(300 * time.Millisecond)
	if got := srv.Degradation().Level; got != degrade.Normal {
		t.Errorf("300ms after a reload to a 1m interval, a request in flight: %v, want Normal (no sample since)", got)
	}
}
