package httplimit_test

import (
	"context"
	"net/http"
	"net/netip"
	"testing"

	"github.com/sluice-dev/sluice/httplimit"
)

// A kept decision settled with a gRPC answer is judged by its grpc-status,
// as DoneWithResponse judges one: HTTP 200 with grpc-status 14
// (Unavailable) is a failure, which a limit counting only successes does
// not count.
func TestPendingSettlesAGRPCAnswerByItsStatus(t *testing.T) {
	ctx := context.Background()
	mw := counted(t)
	who := httplimit.Requester{IP: netip.MustParseAddr("192.0.2.1")}
	res, err := mw.DecideFor(ctx, who, "POST", "/pkg.Service/Call", 1)
	if err != nil || !res.Decision.Allowed {
		t.Fatalf("%v %+v", err, res)
	}
	p := mw.Keep(res)
	mw.Discard(res)
	if err := p.Settle(ctx, http.StatusOK, http.Header{"Content-Type": {"application/grpc"}, "Grpc-Status": {"14"}}); err != nil {
		t.Fatal(err)
	}
	if got := remaining(t, mw); got["wins"] != 3 || got["fails"] != 2 {
		t.Errorf("after a call that failed with Unavailable: %v, want wins 3 (no success), fails 2 (one failure)", got)
	}
}
