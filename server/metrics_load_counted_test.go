package server_test

import (
	"net/http"
	"strings"
	"testing"
)

// sluice_load_error_rate and sluice_load_p99_seconds export the signals
// as the controller reads them against the thresholds: an error rate
// judged only over degradation.min_answers (20 by default) answers, a p99
// over 100 or more, and 0 below that, as their HELP and the Grafana
// panels say. One failed answer in an interval is not an error rate of 1
// that an operator would set thresholds against, nor its latency a p99.
func TestLoadSignalsOfTooFewAnswersAreExportedAsZero(t *testing.T) {
	f := newFixtureOn(t, testConfig+`
degradation:
  interval: 1m
  levels:
    elevated: {enter: {error_rate: 0.5, p99: 1ms}}
`, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	}))
	r := f.do(t, "GET", "/api/items", "", nil)
	readAll(t, r)
	if r.StatusCode != 500 {
		t.Fatalf("status %d", r.StatusCode)
	}
	if l := f.srv.SampleNow(); l != 0 {
		t.Fatalf("level %v after one answer", l)
	}
	metrics := readAll(t, f.do(t, "GET", "/metrics", "", nil))
	help := grepLines(metrics, "sluice_load_error_rate") + grepLines(metrics, "sluice_load_p99_seconds")
	if !strings.Contains(metrics, "\nsluice_load_error_rate 0\n") {
		t.Errorf("one failed answer of one (too few for min_answers 20): the error rate exported is not 0:\n%s", help)
	}
	if !strings.Contains(metrics, "\nsluice_load_p99_seconds 0\n") {
		t.Errorf("one answer (too few for a p99): the p99 exported is not 0:\n%s", help)
	}
}
