package server

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestProxysOwnAnswersToGRPCCallsAreStatuses: the proxy's own answers to a
// gRPC call (markOwn: its 400, 408, 502 and 504) become trailers-only
// answers as sluice's other own answers do, 502 UNAVAILABLE, 408 and 504
// DEADLINE_EXCEEDED; the monitor counts each by its HTTP status, as the
// proxy's answers to other requests (a 502 or 504 the upstream's failure,
// a 408 the client's, never a failure), and reads no grpc-status of it
// after (upstreamStatus 0, which grpcOutcome skips).
func TestProxysOwnAnswersToGRPCCallsAreStatuses(t *testing.T) {
	for _, tc := range []struct {
		code       int
		grpcStatus string
	}{
		{http.StatusBadRequest, "3"},
		{http.StatusRequestTimeout, "4"},
		{http.StatusBadGateway, "14"},
		{http.StatusGatewayTimeout, "4"},
	} {
		rec := httptest.NewRecorder()
		counted := -1
		sw := &statusWriter{ResponseWriter: rec, upstream: true, end: func(status int) { counted = status }}
		g := &grpcAnswer{ResponseWriter: sw, sw: sw, contentType: "application/grpc"}
		markOwn(g)
		writeJSONProblem(g, tc.code, http.StatusText(tc.code), "the proxy's own")
		g.finish()
		if rec.Code != 200 || rec.Header().Get("Grpc-Status") != tc.grpcStatus || rec.Body.Len() != 0 ||
			rec.Header().Get("Grpc-Message") != "the proxy's own" {
			t.Errorf("the proxy's %d: %d %v body %q, want a trailers-only answer, grpc-status %s",
				tc.code, rec.Code, rec.Header(), rec.Body, tc.grpcStatus)
		}
		if counted != tc.code || sw.upstreamStatus() != 0 {
			t.Errorf("the proxy's %d: the monitor counted %d, and reads %d after; want %d, then none",
				tc.code, counted, sw.upstreamStatus(), tc.code)
		}
	}
}
