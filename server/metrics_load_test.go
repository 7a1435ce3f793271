package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// The load signals the degradation levels are set against are exported as
// the last sample read them: a request held in flight by the upstream is
// sluice_load_in_flight 1 at the next sample, 0 once it is answered, and
// each signal has its series (the CPU share once a window of it was
// measured).
func TestLoadSignalsAreExported(t *testing.T) {
	arrived, release := make(chan struct{}, 1), make(chan struct{})
	f := newFixtureOn(t, testConfig, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
	}))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if r, err := f.http.Client().Get(f.http.URL + "/api/items"); err == nil {
			r.Body.Close()
		}
	}()
	<-arrived
	f.srv.SampleNow()
	metrics := readAll(t, f.do(t, "GET", "/metrics", "", nil))
	if !strings.Contains(metrics, "\nsluice_load_in_flight 1\n") {
		t.Errorf("a request in flight at the sample:\n%s", grepLines(metrics, "sluice_load_"))
	}
	close(release)
	<-done
	time.Sleep(150 * time.Millisecond) // the CPU share is of a window of at least 100 ms
	f.srv.SampleNow()
	metrics = readAll(t, f.do(t, "GET", "/metrics", "", nil))
	for _, series := range []string{"sluice_load_in_flight 0", "sluice_load_p99_seconds ", "sluice_load_error_rate 0",
		"sluice_load_sched_p99_seconds ", "sluice_load_cpu_ratio ", "sluice_load_memory_ratio "} {
		if !strings.Contains(metrics, "\n"+series) {
			t.Errorf("no %q after the request was answered:\n%s", series, grepLines(metrics, "sluice_load_"))
		}
	}
}
