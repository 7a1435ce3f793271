package server

import (
	"encoding/base64"
	"net/http/httptest"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// proxyQuotaFailure refuses a gRPC call through mw as the proxy does (its
// refusal turned into a trailers-only answer by grpcAnswer), deciding at
// most n calls, and returns the QuotaFailure violations of the answer.
func proxyQuotaFailure(t *testing.T, mw *httplimit.Middleware, n int) []*errdetails.QuotaFailure_Violation {
	t.Helper()
	for range n {
		r := httptest.NewRequest("POST", "/pkg.Svc/Method", nil)
		r.Header.Set("Content-Type", "application/grpc")
		r.RemoteAddr = "192.0.2.1:1"
		res, err := mw.Decide(r)
		if err != nil {
			t.Fatal(err)
		}
		if res.Decision.Allowed {
			continue // kept: a concurrency slot stays held
		}
		rec := httptest.NewRecorder()
		sw := &statusWriter{ResponseWriter: rec}
		g := &grpcAnswer{ResponseWriter: sw, sw: sw, contentType: "application/grpc"}
		mw.Refuse(g, r, res)
		g.finish()
		b, err := base64.RawStdEncoding.DecodeString(rec.Header().Get("Grpc-Status-Details-Bin"))
		var st spb.Status
		if err != nil || proto.Unmarshal(b, &st) != nil {
			t.Fatalf("grpc-status-details-bin %q", rec.Header().Get("Grpc-Status-Details-Bin"))
		}
		for _, a := range st.Details {
			var qf errdetails.QuotaFailure
			if a.UnmarshalTo(&qf) == nil {
				return qf.Violations
			}
		}
		t.Fatalf("no QuotaFailure in %v", &st)
	}
	t.Fatal("never refused")
	return nil
}

// The QuotaFailure of a call the proxy refuses describes each limit that
// refused as grpclimit's interceptors do (httplimit.Result.Describe): a
// concurrency limit has no window ("2 at once"), a global limit is the
// whole service's, not the client's plan's, and a bucket is stated as
// configured (5 per 1s, whatever its burst); its quota value is the
// limit's quantity, as the interceptors' is.
func TestProxyQuotaFailureDescribesTheLimit(t *testing.T) {
	mem := memory.New(memory.WithSweepInterval(0))
	defer mem.Close()
	lim := sluice.NewLimiter(mem)
	for _, c := range []struct {
		name    string
		o       httplimit.Options
		calls   int
		quota   string
		value   int64
		explain string
	}{
		{"concurrency", httplimit.Options{Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{
			sluice.NewLimit(sluice.AlgorithmConcurrency, 2, time.Minute).Named("in-flight")}}}},
			3, "in-flight", 2, "in-flight: 2 at once on the free plan"},
		{"global", httplimit.Options{
			Plans:  []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(100, time.Minute).Named("per-minute")}}},
			Global: []sluice.Limit{sluice.FixedWindow(1, time.Minute).Named("service")}},
			2, "service", 1, "service: 1 per 1m for the whole service"},
		{"bucket", httplimit.Options{Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{
			sluice.TokenBucket(5, time.Second).WithBurst(10).Named("per-second")}}}},
			20, "per-second", 5, "per-second: 5 per 1s on the free plan"},
	} {
		c.o.Scope = c.name // a state of its own
		mw, err := httplimit.New(lim, c.o)
		if err != nil {
			t.Fatal(err)
		}
		vs := proxyQuotaFailure(t, mw, c.calls)
		if len(vs) != 1 || vs[0].QuotaId != c.quota || vs[0].Description != c.explain || vs[0].QuotaValue != c.value {
			t.Errorf("%s: violations %v; want %s described %q, quota value %d", c.name, vs, c.quota, c.explain, c.value)
		}
	}
}
