package grpclimit_test

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/grpclimit"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// tailStream (sluice.test.Tail/Tail) sends its request back, then ends in
// a refusal of the service's own quota: RESOURCE_EXHAUSTED, RetryInfo
// 30 s, a QuotaFailure.
var tailStream = grpc.StreamDesc{StreamName: "Tail", ServerStreams: true, Handler: func(srv any, ss grpc.ServerStream) error {
	in := new(wrapperspb.StringValue)
	if err := ss.RecvMsg(in); err != nil {
		return err
	}
	if err := ss.SendMsg(in); err != nil {
		return err
	}
	st, _ := status.New(codes.ResourceExhausted, "per-message quota spent").WithDetails(
		&errdetails.RetryInfo{RetryDelay: durationpb.New(30 * time.Second)},
		&errdetails.QuotaFailure{Violations: []*errdetails.QuotaFailure_Violation{{Subject: "me", QuotaId: "messages"}}})
	return st.Err()
}}

// A stream whose first message's header carried RateLimit fields (a
// Server's admitted stream) has taught the Pacer its admission by then;
// when it ends in a refusal of the service's own (RESOURCE_EXHAUSTED with
// a RetryInfo of 30 s), that is a refusal as a unary call's is: the Pacer
// holds every call until its delay is over, and the next call, held beyond
// MaxWait, fails at once.
func TestAStreamRefusedAfterItsAdmissionHoldsThePacer(t *testing.T) {
	t.Parallel()
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	limits, err := grpclimit.New(sluice.NewLimiter(store), grpclimit.Options{Limits: httplimit.Options{
		Plans: []*httplimit.Plan{plan("free", sluice.PerMinute(100))}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(limits.UnaryInterceptor()), grpc.ChainStreamInterceptor(limits.StreamInterceptor()))
	srv.RegisterService(&grpc.ServiceDesc{ServiceName: "sluice.test.Tail", HandlerType: (*any)(nil),
		Streams: []grpc.StreamDesc{tailStream}}, nil)
	pacer := &grpclimit.Pacer{MaxWait: 200 * time.Millisecond}
	conn, err := grpc.NewClient(run(t, srv), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithChainUnaryInterceptor(pacer.UnaryInterceptor()), grpc.WithChainStreamInterceptor(pacer.StreamInterceptor()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })

	// The Pacer's probe: it learns the quota, 100 a minute.
	if _, err := say(context.Background(), conn, methodSay); err != nil {
		t.Fatal(err)
	}
	cs, err := conn.NewStream(context.Background(), &tailStream, "/sluice.test.Tail/Tail")
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.SendMsg(wrapperspb.String("t")); err != nil {
		t.Fatal(err)
	}
	if err := cs.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if err := cs.RecvMsg(new(wrapperspb.StringValue)); err != nil {
		t.Fatalf("the stream's first message: %v", err)
	}
	if err := cs.RecvMsg(new(wrapperspb.StringValue)); err == io.EOF || status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("the stream's end: %v; want the service's RESOURCE_EXHAUSTED", err)
	}
	if _, err := say(context.Background(), conn, methodSay); err == nil || !strings.Contains(err.Error(), "grpclimit: pacer:") {
		t.Errorf("a call right after a stream refused with RetryInfo 30 s: %v; want it held by the pacer (wait too long)", err)
	}
}
