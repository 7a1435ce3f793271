package grpclimit_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/grpclimit"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// Pacer.MaxWait is the longest a call is held. A call held for the slot
// of a concurrency quota that an open stream holds has no known end: with
// no deadline, it fails with RESOURCE_EXHAUSTED once it has been held
// MaxWait, not when the stream ends, nor at once when MaxWait is shorter
// than the second a concurrency answer's reset is taken to be.
func TestAPacerCallHeldForASlotIsBoundedByMaxWait(t *testing.T) {
	addr := concurrencyServer(t, 1)
	const maxWait = 500 * time.Millisecond
	conn := dialPaced(t, addr, &grpclimit.Pacer{MaxWait: maxWait})

	if _, err := say(context.Background(), conn, methodSay); err != nil { // the probe: learns the quota
		t.Fatal(err)
	}
	sctx, scancel := context.WithCancel(context.Background())
	defer scancel()
	openHeldStream(t, sctx, conn)

	type result struct {
		err     error
		elapsed time.Duration
	}
	done := make(chan result, 1)
	go func() {
		start := time.Now()
		_, err := say(context.Background(), conn, methodSay)
		done <- result{err, time.Since(start)}
	}()
	select {
	case r := <-done:
		if status.Code(r.err) != codes.ResourceExhausted || r.elapsed < maxWait/2 {
			t.Errorf("a call while a stream held the only slot: after %v, %v; want RESOURCE_EXHAUSTED (pacer: wait too long) after about MaxWait", r.elapsed, r.err)
		}
	case <-time.After(3 * time.Second):
		t.Errorf("a call held for the only slot, with MaxWait %v and no deadline, was still held after 3 s; want it failed with RESOURCE_EXHAUSTED by MaxWait", maxWait)
		scancel()
		r := <-done
		t.Logf("it returned %v after %v, once the stream ended", r.err, r.elapsed.Round(time.Millisecond))
	}
}

// concurrencyServer serves the Held and Echo services under a plan of
// slots concurrent calls, stopped when t ends, and returns its address.
func concurrencyServer(t *testing.T, slots int64) string {
	t.Helper()
	return concurrencyServerWith(t, slots, concurrencySetup{services: []*grpc.ServiceDesc{&holdService}})
}

// concurrencySetup is what concurrencyServerWith adds to a server under a
// plan of concurrent calls.
type concurrencySetup struct {
	services []*grpc.ServiceDesc // served besides Echo
	refused  *atomic.Int64       // when set, counts the calls the limiter refused
	// before and after are unary interceptors chained in front of and
	// behind the limiter's.
	before, after []grpc.UnaryServerInterceptor
}

// concurrencyServerWith serves Echo and setup's services under a plan of
// slots concurrent calls, stopped when t ends, and returns its address.
func concurrencyServerWith(t *testing.T, slots int64, setup concurrencySetup) string {
	t.Helper()
	store := memory.New(memory.WithClockResolution(0))
	t.Cleanup(func() { store.Close() })
	opts := httplimit.Options{Plans: []*httplimit.Plan{plan("free", sluice.Concurrency(slots, time.Minute))}}
	if refused := setup.refused; refused != nil {
		opts.Observer = func(res *httplimit.Result, _ time.Duration, err error) {
			if err == nil && !res.Decision.Allowed {
				refused.Add(1)
			}
		}
	}
	limits, err := grpclimit.New(sluice.NewLimiter(store), grpclimit.Options{Limits: opts})
	if err != nil {
		t.Fatal(err)
	}
	unary := append(append(append([]grpc.UnaryServerInterceptor{}, setup.before...), limits.UnaryInterceptor()), setup.after...)
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(unary...), grpc.ChainStreamInterceptor(limits.StreamInterceptor()))
	for _, service := range setup.services {
		srv.RegisterService(service, nil)
	}
	return run(t, srv)
}

// dialPaced is a connection to addr whose calls pacer paces, closed when
// t ends.
func dialPaced(t *testing.T, addr string, pacer *grpclimit.Pacer) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithChainUnaryInterceptor(pacer.UnaryInterceptor()), grpc.WithChainStreamInterceptor(pacer.StreamInterceptor()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// openHeldStream opens a Hold stream on conn and reads its first message: it
// holds a slot of the server's concurrency limit until ctx ends.
func openHeldStream(t *testing.T, ctx context.Context, conn *grpc.ClientConn) {
	t.Helper()
	cs, err := conn.NewStream(ctx, &holdStream, "/sluice.test.Held/Hold")
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.SendMsg(wrapperspb.String("x")); err != nil {
		t.Fatal(err)
	}
	cs.CloseSend()
	if err := cs.RecvMsg(new(wrapperspb.StringValue)); err != nil {
		t.Fatal(err)
	}
}
