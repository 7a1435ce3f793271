package grpclimit_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/grpclimit"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// A refusal by the penalty box (httplimit.Penalty) is no limit of the
// client's plan: its QuotaFailure has one violation, quota id "penalty",
// metric "requests", no dimensions and no quota value, described as the
// problem body describes the box (every request refused for its term),
// never as a limit of the plan ("penalty: 1 per 10m on the free plan",
// which is the box's bookkeeping, not what the client may spend).
func TestAPenaltyBoxRefusalNamesTheBoxNotALimitOfThePlan(t *testing.T) {
	store := memory.New(memory.WithClock(func() time.Time { return stillAt }), memory.WithSweepInterval(0))
	t.Cleanup(func() { store.Close() })
	s, err := grpclimit.New(sluice.NewLimiter(store), grpclimit.Options{Limits: httplimit.Options{
		Plans:   []*httplimit.Plan{plan("free", sluice.FixedWindow(1, time.Hour))},
		Penalty: httplimit.Penalty{Refusals: 1, Within: time.Hour, For: 10 * time.Minute},
		Clock:   func() time.Time { return stillAt }}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := peer.NewContext(context.Background(), &peer.Peer{Addr: &net.TCPAddr{IP: net.IPv4(192, 0, 2, 7), Port: 4000}})
	ctx = grpc.NewContextWithServerTransportStream(ctx, nopStream{method: methodSay})
	ctx = metadata.NewIncomingContext(ctx, metadata.MD{})
	ok := func(context.Context, any) (any, error) { return "ok", nil }
	// The first call is admitted, the second refused by the plan's limit
	// (which boxes the client: Refusals 1), the third refused by the box.
	var last error
	for range 3 {
		_, last = s.UnaryInterceptor()(ctx, nil, &grpc.UnaryServerInfo{FullMethod: methodSay}, ok)
	}
	st, _ := status.FromError(last)
	if !strings.Contains(st.Message(), "penalty box") {
		t.Fatalf("third call: %v, want the penalty box's refusal", last)
	}
	var qf *errdetails.QuotaFailure
	for _, d := range st.Details() {
		if d, isQF := d.(*errdetails.QuotaFailure); isQF {
			qf = d
		}
	}
	if qf == nil || len(qf.Violations) != 1 {
		t.Fatalf("details %v, want a QuotaFailure with one violation, the box's", st.Details())
	}
	v := qf.Violations[0]
	if v.QuotaId != "penalty" || v.QuotaMetric != "requests" || len(v.QuotaDimensions) != 0 || v.QuotaValue != 0 {
		t.Errorf("violation %+v, want quota id penalty, metric requests, no dimensions and no quota value", v)
	}
	if want := "In the penalty box: every request is refused for 10m."; v.Description != want {
		t.Errorf("description %q, want %q", v.Description, want)
	}
	if v.Subject == "" {
		t.Errorf("violation %+v names no subject, want the client as keyed", v)
	}
}
