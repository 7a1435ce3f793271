package grpclimit_test

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/grpclimit"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// A call refused because its turn in a leaky-bucket queue comes after its
// deadline is observed as what its caller saw, a refusal by the queue:
// Options.Observer, the hook of sluice_decisions_total, is told once, of
// a decision not allowed, whose violated limit is the queue.
func TestACallRefusedForItsDeadlineIsObservedRefused(t *testing.T) {
	t.Parallel()
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	type seen struct {
		allowed  bool
		violated []string
	}
	var (
		mu       sync.Mutex
		observed []seen
	)
	s, err := grpclimit.New(sluice.NewLimiter(store), grpclimit.Options{Limits: httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{
			sluice.LeakyBucket(1, time.Hour).WithMaxWait(2 * time.Hour).Named("queue"),
		}}},
		Observer: func(res *httplimit.Result, _ time.Duration, err error) {
			if err == nil {
				mu.Lock()
				observed = append(observed, seen{res.Decision.Allowed, append([]string(nil), res.Decision.Violated...)})
				mu.Unlock()
			}
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	call := func(ctx context.Context) error {
		ctx = peer.NewContext(ctx, &peer.Peer{Addr: &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 1}})
		_, err := s.UnaryInterceptor()(ctx, nil, &grpc.UnaryServerInfo{FullMethod: methodUse},
			func(context.Context, any) (any, error) { return "ok", nil })
		return err
	}
	if err := call(context.Background()); err != nil {
		t.Fatalf("first call: %v; want it served at once", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := call(ctx); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("a call whose turn comes in an hour, with 2 s left: %v; want RESOURCE_EXHAUSTED", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(observed) != 2 || !observed[0].allowed {
		t.Fatalf("observed %+v; want two decisions, the first allowed", observed)
	}
	if got := observed[1]; got.allowed || len(got.violated) != 1 || got.violated[0] != "queue" {
		t.Errorf("the call refused for its deadline was observed %+v; want refused by the queue, as its caller saw", got)
	}
}
