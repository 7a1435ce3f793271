package server

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"testing"

	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
)

// TestGRPCAnswerTurnsSluicesOwnAnswersIntoStatuses: a degraded level's 503
// becomes UNAVAILABLE with its Retry-After as RetryInfo, a body that is no
// problem (a template's) keeps its status with the HTTP reason as message,
// and the upstream's answers pass untouched.
func TestGRPCAnswerTurnsSluicesOwnAnswersIntoStatuses(t *testing.T) {
	answer := func(upstream bool, code int, body string, header map[string]string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		sw := &statusWriter{ResponseWriter: rec, upstream: upstream}
		g := &grpcAnswer{ResponseWriter: sw, sw: sw, contentType: "application/grpc"}
		for k, v := range header {
			g.Header().Set(k, v)
		}
		g.WriteHeader(code)
		g.Write([]byte(body))
		g.finish()
		return rec
	}
	details := func(rec *httptest.ResponseRecorder) *spb.Status {
		b, err := base64.RawStdEncoding.DecodeString(rec.Header().Get("Grpc-Status-Details-Bin"))
		var st spb.Status
		if err != nil || proto.Unmarshal(b, &st) != nil {
			t.Fatalf("grpc-status-details-bin %q", rec.Header().Get("Grpc-Status-Details-Bin"))
		}
		return &st
	}

	rec := answer(false, http.StatusServiceUnavailable, `{"detail":"The service is overloaded; 100% sure."}`,
		map[string]string{"Retry-After": "5", "Content-Type": "application/problem+json", "Content-Length": "51"})
	if rec.Code != 200 || rec.Header().Get("Grpc-Status") != "14" || rec.Header().Get("Content-Type") != "application/grpc" ||
		rec.Header().Get("Content-Length") != "" || rec.Body.Len() != 0 ||
		rec.Header().Get("Grpc-Message") != "The service is overloaded; 100%25 sure." {
		t.Errorf("503: %d %v body %q", rec.Code, rec.Header(), rec.Body)
	}
	if st := details(rec); codes.Code(st.Code) != codes.Unavailable || len(st.Details) != 1 {
		t.Errorf("503 details: %v", st)
	}

	rec = answer(false, http.StatusTooManyRequests, `{"error":{"code":"RATE_LIMIT_EXCEEDED"}}`, nil)
	if rec.Header().Get("Grpc-Status") != "8" || rec.Header().Get("Grpc-Message") != "Too Many Requests" {
		t.Errorf("template 429: %v", rec.Header())
	}

	rec = answer(false, http.StatusBadRequest, `{"detail":"X-Forwarded-Uri is not a request URI"}`, nil)
	if rec.Header().Get("Grpc-Status") != "3" {
		t.Errorf("400: %v", rec.Header())
	}

	rec = answer(true, http.StatusServiceUnavailable, "upstream's own", nil)
	if rec.Code != 503 || rec.Header().Get("Grpc-Status") != "" || rec.Body.String() != "upstream's own" {
		t.Errorf("the upstream's 503: %d %v %q", rec.Code, rec.Header(), rec.Body)
	}
}
