package server

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/degrade"
)

// TestAnOutcomeAtTheCallsDeadlineIsTheCallers: a gRPC call's deadline (its
// grpc-timeout) is its caller's choice, as a cancellation is. What ends
// the call at or after it is neither an answer nor a failure of the
// upstream's, only a latency (degrade.Abandoned): the proxy's own 502 or
// 504 (a healthy grpc-go service resets the stream at the deadline), which
// the caller then reads as DEADLINE_EXCEEDED, not UNAVAILABLE; and the
// upstream's own answer, a DEADLINE_EXCEEDED trailers-only one included.
// Before the deadline the proxy's 502 is still the upstream's failure.
func TestAnOutcomeAtTheCallsDeadlineIsTheCallers(t *testing.T) {
	past, future := time.Now().Add(-time.Millisecond), time.Now().Add(time.Hour)
	for _, tc := range []struct {
		code     int
		deadline time.Time
		status   string
		counted  int
	}{
		{http.StatusBadGateway, past, "4", degrade.Abandoned},
		{http.StatusGatewayTimeout, past, "4", degrade.Abandoned},
		{http.StatusBadGateway, future, "14", http.StatusBadGateway},
		{http.StatusBadGateway, time.Time{}, "14", http.StatusBadGateway},
	} {
		rec := httptest.NewRecorder()
		counted := 0
		sw := &statusWriter{ResponseWriter: rec, upstream: true, end: func(status int) { counted = status }}
		g := &grpcAnswer{ResponseWriter: sw, sw: sw, contentType: "application/grpc", deadline: tc.deadline}
		markOwn(g)
		writeJSONProblem(g, tc.code, http.StatusText(tc.code), "the proxy's own")
		g.finish()
		if got := rec.Header().Get("Grpc-Status"); got != tc.status || counted != tc.counted {
			t.Errorf("the proxy's %d, deadline %v: grpc-status %s, the monitor counted %d; want %s, %d",
				tc.code, tc.deadline, got, counted, tc.status, tc.counted)
		}
	}

	// The upstream's trailers-only DEADLINE_EXCEEDED, at the deadline.
	mon := degrade.NewMonitor(nil)
	s := &Server{mon: mon}
	sw := &statusWriter{ResponseWriter: httptest.NewRecorder(), status: http.StatusOK, mon: mon}
	g := &grpcAnswer{ResponseWriter: sw, sw: sw, contentType: "application/grpc", deadline: past}
	sw.upstream = true
	sw.begin()
	g.Header().Set("Grpc-Status", "4")
	g.WriteHeader(http.StatusOK)
	s.grpcOutcome(g)
	if sig := mon.Sample(); sig.Answers != 0 || sig.Failures != 0 || sig.InFlight != 0 || sig.Abandoned != 1 {
		t.Errorf("the upstream's DEADLINE_EXCEEDED at the call's deadline: %d answers, %d failures, %d in flight, %d abandoned; want 1 abandoned alone",
			sig.Answers, sig.Failures, sig.InFlight, sig.Abandoned)
	}
}
