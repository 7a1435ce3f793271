package grpclimit_test

import (
	"context"
	"net"
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

// The interceptors report exact figures (docs/headers.md, docs/grpc.md):
// RetryInfo is the exact wait, to which grpclimit.Retry adds a jitter of
// its own, whatever Limits.RetryJitter (set when a Server shares its
// httplimit.Options with the HTTP middleware, whose answers it spreads).
// Here a fixed window of 1 per hour refuses at 10:20:30 under a
// RetryJitter of 5m: every client is told 39m30s.
func TestRetryInfoIsTheExactWaitWhateverTheRetryJitter(t *testing.T) {
	store := memory.New(memory.WithClock(func() time.Time { return stillAt }), memory.WithSweepInterval(0))
	t.Cleanup(func() { store.Close() })
	s, err := grpclimit.New(sluice.NewLimiter(store), grpclimit.Options{Limits: httplimit.Options{
		Plans:       []*httplimit.Plan{plan("free", sluice.FixedWindow(1, time.Hour))},
		UnknownKeys: "key", RetryJitter: 5 * time.Minute,
		Clock: func() time.Time { return stillAt }}})
	if err != nil {
		t.Fatal(err)
	}
	// stillAt is 10:20:30: the hour's window ends at 11:00, 39m30s later.
	const exact = 39*time.Minute + 30*time.Second
	base := peer.NewContext(context.Background(), &peer.Peer{Addr: &net.TCPAddr{IP: net.IPv4(192, 0, 2, 7), Port: 4000}})
	base = grpc.NewContextWithServerTransportStream(base, nopStream{method: methodSay})
	ok := func(context.Context, any) (any, error) { return "ok", nil }
	for _, key := range []string{"k-1", "k-2", "k-3", "k-4"} {
		ctx := metadata.NewIncomingContext(base, metadata.Pairs("authorization", "Bearer "+key))
		call := func() error {
			_, err := s.UnaryInterceptor()(ctx, nil, &grpc.UnaryServerInfo{FullMethod: methodSay}, ok)
			return err
		}
		if err := call(); err != nil {
			t.Fatalf("key %s: first call: %v", key, err)
		}
		err := call()
		st, _ := status.FromError(err)
		var ri *errdetails.RetryInfo
		for _, d := range st.Details() {
			if d, isRI := d.(*errdetails.RetryInfo); isRI {
				ri = d
			}
		}
		if ri == nil {
			t.Fatalf("key %s: second call: %v, want a refusal with RetryInfo", key, err)
		}
		if d := ri.GetRetryDelay().AsDuration(); d != exact {
			t.Errorf("key %s: RetryInfo delay %v, want the exact wait %v (RetryJitter added %v)", key, d, exact, d-exact)
		}
	}
}
