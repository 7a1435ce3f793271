package server

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// sluice's own refusals of a gRPC call (a limit's 429, the global limits'
// or a degraded level's 503) carry grpc-retry-pushback-ms in the headers
// of their trailers-only answer: the Retry-After in milliseconds, or -1
// (do not retry) when the refusal has no Retry-After (no wait helps) or
// its wait ends at or after the call's deadline. Its other answers (a bad
// request, the proxy's own 400, 408, 502 and 504, failures a retry may
// cure) and the upstream's carry none.
func TestSluicesOwnGRPCRefusalsCarryAPushbackItsFailuresNone(t *testing.T) {
	for _, tc := range []struct {
		name string
		// upstream: the upstream was reached, and own, the proxy answered
		// it itself (markOwn).
		upstream, own bool
		code          int
		retryAfter    string
		deadline      time.Duration // from now; 0: none
		want          string
	}{
		{"a limit's refusal", false, false, http.StatusTooManyRequests, "2", 0, "2000"},
		{"a degraded level's refusal", false, false, http.StatusServiceUnavailable, "7", 0, "7000"},
		{"a refusal whose wait ends before the deadline", false, false, http.StatusTooManyRequests, "2", time.Minute, "2000"},
		{"a refusal whose wait ends after the deadline", false, false, http.StatusServiceUnavailable, "2", time.Second, "-1"},
		{"a refusal that no wait cures", false, false, http.StatusTooManyRequests, "", 0, "-1"},
		{"a bad request", false, false, http.StatusBadRequest, "", 0, ""},
		{"the proxy's 400", true, true, http.StatusBadRequest, "", 0, ""},
		{"the proxy's 408", true, true, http.StatusRequestTimeout, "", 0, ""},
		{"the proxy's 502", true, true, http.StatusBadGateway, "", 0, ""},
		{"the proxy's 504", true, true, http.StatusGatewayTimeout, "", 0, ""},
		{"the upstream's 503", true, false, http.StatusServiceUnavailable, "2", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			sw := &statusWriter{ResponseWriter: rec, upstream: tc.upstream, own: tc.own}
			g := &grpcAnswer{ResponseWriter: sw, sw: sw, contentType: "application/grpc"}
			if tc.deadline > 0 {
				g.deadline = time.Now().Add(tc.deadline)
			}
			if tc.retryAfter != "" {
				g.Header().Set("Retry-After", tc.retryAfter)
			}
			writeJSONProblem(g, tc.code, http.StatusText(tc.code), "refused or failed")
			g.finish()
			if got, ok := rec.Header()["Grpc-Retry-Pushback-Ms"]; tc.want == "" && ok || tc.want != "" && (len(got) != 1 || got[0] != tc.want) {
				t.Errorf("%d: grpc-retry-pushback-ms %q, want %q", tc.code, got, tc.want)
			}
		})
	}
}

// A call's deadline is the one its grpc-timeout header states from when it
// is read: 1 to 8 ASCII digits and a unit (H, M, S, m, u, n). A header
// that is missing or malformed, or a timeout past what a time.Duration
// holds, is no deadline.
func TestAGRPCCallsDeadlineIsItsGRPCTimeout(t *testing.T) {
	for _, tc := range []struct {
		header string
		want   time.Duration // 0: no deadline
	}{
		{"", 0},
		{"2S", 2 * time.Second},
		{"250m", 250 * time.Millisecond},
		{"3M", 3 * time.Minute},
		{"1H", time.Hour},
		{"1500u", 1500 * time.Microsecond},
		{"99999999n", 99999999 * time.Nanosecond},
		{"99999999H", 0},
		{"123456789S", 0},
		{"S", 0},
		{"2s", 0},
		{"+2S", 0},
		{"-2S", 0},
		{"2 S", 0},
		{"0x2S", 0},
	} {
		r := httptest.NewRequest("POST", "/pkg.Svc/Method", nil)
		r.Header.Set("Content-Type", "application/grpc")
		if tc.header != "" {
			r.Header.Set("Grpc-Timeout", tc.header)
		}
		before := time.Now()
		got := grpcCallDeadline(r)
		after := time.Now()
		switch {
		case tc.want == 0 && !got.IsZero():
			t.Errorf("grpc-timeout %q: deadline %v from now, want none", tc.header, got.Sub(before))
		case tc.want != 0 && (got.Before(before.Add(tc.want)) || got.After(after.Add(tc.want))):
			t.Errorf("grpc-timeout %q: deadline %v from now, want %v", tc.header, got.Sub(before), tc.want)
		}
	}
}
