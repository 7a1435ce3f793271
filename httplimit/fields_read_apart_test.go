package httplimit_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// Handler judges the request next is given. One whose fields next may
// read otherwise than the limits — Content-Type fields that differ (a
// singleton field: the limits read the first, grpc-go's transport takes
// any gRPC one), or a gRPC call's grpc-timeout fields that differ (the
// limits read the first deadline, grpc-go's transport obeys the last), or
// a Connect call's Connect-Timeout-Ms fields that differ — is
// refused with a 400 problem before any decision: not served, nothing
// spent. Fields repeated with one value, and grpc-timeout fields of a
// request that is no call (which no gRPC server reads), are served.
func TestAHandlerRefusesFieldsNextMayReadApart(t *testing.T) {
	mw, _ := clockedMiddleware(t, httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{
			sluice.FixedWindow(2, time.Minute).Named("per-minute"),
		}}},
	})
	served := 0
	h := mw.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served++ }))
	send := func(h http.Handler, fields http.Header) *httptest.ResponseRecorder {
		r := httptest.NewRequest("POST", "/pkg.Service/Method", nil)
		r.Header = fields
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	for name, fields := range map[string]http.Header{
		"grpc-timeout 100S, then 1m":               {"Content-Type": {"application/grpc"}, "Grpc-Timeout": {"100S", "1m"}},
		"Content-Type text/plain, then gRPC's":     {"Content-Type": {"text/plain", "application/grpc"}, "Grpc-Timeout": {"1m"}},
		"Content-Type application/json, then form": {"Content-Type": {"application/json", "application/x-www-form-urlencoded"}},
		"Connect-Timeout-Ms 100000, then 1":        {"Content-Type": {"application/json"}, "Connect-Protocol-Version": {"1"}, "Connect-Timeout-Ms": {"100000", "1"}},
	} {
		w := send(h, fields)
		var p httplimit.Problem
		if err := json.Unmarshal(w.Body.Bytes(), &p); w.Code != http.StatusBadRequest || err != nil || p.Status != http.StatusBadRequest || p.Detail == "" {
			t.Errorf("%s: %d %s; want a 400 problem", name, w.Code, w.Body)
		}
	}
	if served != 0 {
		t.Fatalf("requests refused: served %d times; want none", served)
	}
	for name, fields := range map[string]http.Header{
		"grpc-timeout 1S twice":               {"Content-Type": {"application/grpc"}, "Grpc-Timeout": {"1S", "1S"}},
		"no call, grpc-timeout 100S, then 1m": {"Content-Type": {"application/json"}, "Grpc-Timeout": {"100S", "1m"}},
	} {
		if w := send(h, fields); w.Code != http.StatusOK {
			t.Errorf("%s: %d %s; want served (the refusals spent nothing of 2 a minute)", name, w.Code, w.Body)
		}
	}
	if served != 2 {
		t.Errorf("served %d times; want 2", served)
	}
}
