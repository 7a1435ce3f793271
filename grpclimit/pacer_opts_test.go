package grpclimit_test

import (
	"context"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/sluice-dev/sluice/grpclimit"
)

// A Pacer reads each call's header and trailer through call options of its
// own, added to the call's: never into the backing array of the options it
// was given, which grpc-go shares between every call of a connection that
// has default call options (grpc.WithDefaultCallOptions) and no options of
// its own, so that concurrent calls would overwrite each other's.
func TestPacerLeavesTheCallersOptionsAlone(t *testing.T) {
	t.Parallel()
	pacer := &grpclimit.Pacer{}
	given := make([]grpc.CallOption, 1, 8)
	given[0] = grpc.WaitForReady(false)
	spare := given[:cap(given)]
	invoker := func(_ context.Context, _ string, _, _ any, _ *grpc.ClientConn, opts ...grpc.CallOption) error {
		for _, o := range opts {
			switch o := o.(type) {
			case grpc.HeaderCallOption:
				*o.HeaderAddr = metadata.Pairs("ratelimit-policy", `"a";q=100;w=1`)
			case grpc.TrailerCallOption:
				*o.TrailerAddr = metadata.Pairs("ratelimit", `"a";r=99;t=1`)
			}
		}
		return nil
	}
	if err := pacer.UnaryInterceptor()(context.Background(), methodSay, nil, nil, nil, invoker, given...); err != nil {
		t.Fatal(err)
	}
	for i, o := range spare[len(given):] {
		if o != nil {
			t.Errorf("the caller's options' spare capacity [%d] holds %T: the pacer appended into it", len(given)+i, o)
		}
	}
}

// The same through a real connection with five default call options
// (grpc-go's append leaves their slice spare capacity), called from 8
// goroutines: go test -race finds no race.
func TestPacedCallsOfAConnectionWithDefaultCallOptions(t *testing.T) {
	t.Parallel()
	pacer := &grpclimit.Pacer{}
	dial := []grpc.DialOption{grpc.WithChainUnaryInterceptor(pacer.UnaryInterceptor())}
	for range 5 {
		dial = append(dial, grpc.WithDefaultCallOptions(grpc.WaitForReady(false)))
	}
	conn := serveWith(t, grpc.EmptyServerOption{}, dial...)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				// No option of the call's own: grpc-go passes the
				// connection's defaults as they are.
				if err := conn.Invoke(context.Background(), methodSay, wrapperspb.String("hi"), new(wrapperspb.StringValue)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}
