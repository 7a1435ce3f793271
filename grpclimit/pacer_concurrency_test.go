package grpclimit_test

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/grpclimit"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// holdStream (server streaming) sends one message back and then holds the
// stream open until the client ends it.
var holdStream = grpc.StreamDesc{StreamName: "Hold", ServerStreams: true, Handler: func(srv any, ss grpc.ServerStream) error {
	in := new(wrapperspb.StringValue)
	if err := ss.RecvMsg(in); err != nil {
		return err
	}
	if err := ss.SendMsg(in); err != nil {
		return err
	}
	<-ss.Context().Done()
	return nil
}}

var holdService = grpc.ServiceDesc{
	ServiceName: "sluice.test.Held",
	HandlerType: (*any)(nil),
	Streams:     []grpc.StreamDesc{holdStream},
}

// A stream that a Server's concurrency limit of one admitted holds its
// slot while it lasts, past any reset: its answer states none
// ("concurrent";r=0), and the stream, answered, is no longer in flight,
// but it has not ended. A call made while it stays open for seconds waits
// for the slot, rather than being sent as a probe into the server's
// RESOURCE_EXHAUSTED once a second has passed.
func TestAnOpenStreamHoldsItsSlotForAsLongAsItLasts(t *testing.T) {
	store := memory.New(memory.WithClockResolution(0))
	defer store.Close()
	var refused atomic.Int64
	limits, err := grpclimit.New(sluice.NewLimiter(store), grpclimit.Options{Limits: httplimit.Options{
		Plans: []*httplimit.Plan{plan("free", sluice.Concurrency(1, time.Minute))},
		Observer: func(res *httplimit.Result, _ time.Duration, err error) {
			if err == nil && !res.Decision.Allowed {
				refused.Add(1)
			}
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(limits.UnaryInterceptor()), grpc.ChainStreamInterceptor(limits.StreamInterceptor()))
	srv.RegisterService(&holdService, nil)
	srv.RegisterService(&echoService, nil)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(lis)
	defer srv.Stop()
	pacer := &grpclimit.Pacer{}
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithChainUnaryInterceptor(pacer.UnaryInterceptor()), grpc.WithChainStreamInterceptor(pacer.StreamInterceptor()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	if _, err := say(context.Background(), conn, methodSay); err != nil { // the probe: learns the quota
		t.Fatal(err)
	}
	sctx, scancel := context.WithCancel(context.Background())
	defer scancel()
	openHeldStream(t, sctx, conn)

	ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
	defer cancel()
	_, err = say(ctx, conn, methodSay)
	if n := refused.Load(); n > 0 {
		t.Errorf("while a stream held the only slot, the Pacer sent %d calls the server refused (last call: %v); want the call held, none sent", n, err)
	}
}

// A cap of 3 calls in flight beside a bucket of 40 a second (burst 4)
// never binds calls that take a millisecond: 8 goroutines are paced at the
// bucket's rate as they are without the cap, the ideal pace
// (docs/client.md). The cap's answer ("concurrent";r=2, no reset) is at
// times the least remaining; were it taken for the binding policy, whose
// reset the probe waits for and whose refills are proven, the batch would
// take more than twice as long.
func TestAConcurrencyCapThatNeverBindsDoesNotSlowThePace(t *testing.T) {
	batch := func(limits ...sluice.Limit) (time.Duration, int) {
		pacer := &grpclimit.Pacer{}
		ts := start(t, grpclimit.Options{Limits: httplimit.Options{Plans: []*httplimit.Plan{plan("free", limits...)}}},
			grpc.WithChainUnaryInterceptor(pacer.UnaryInterceptor()))
		var next atomic.Int64
		var wg sync.WaitGroup
		begin := time.Now()
		for range 8 {
			wg.Go(func() {
				for i := next.Add(1); i <= 80; i = next.Add(1) {
					if _, err := say(context.Background(), ts.conn, methodSay); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		return time.Since(begin), ts.refused()
	}
	alone, refusedAlone := batch(sluice.GCRA(40, time.Second).WithBurst(4))
	capped, refusedCapped := batch(sluice.Concurrency(3, time.Minute), sluice.GCRA(40, time.Second).WithBurst(4))
	t.Logf("80 calls: %v at 40/s alone (%d refused), %v with a cap of 3 in flight beside (%d refused); ideal %v",
		alone.Round(time.Millisecond), refusedAlone, capped.Round(time.Millisecond), refusedCapped, 76*time.Second/40)
	if capped > alone*3/2 {
		t.Errorf("a cap of 3 calls in flight that never binds made the batch take %v, against %v without it; want about as long",
			capped.Round(time.Millisecond), alone.Round(time.Millisecond))
	}
}
