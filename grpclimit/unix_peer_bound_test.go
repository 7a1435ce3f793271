package grpclimit_test

import (
	"context"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/grpclimit"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// A client of a Unix-domain socket may bind its own end to a path of its
// choosing before it connects, and the call's peer address is that path:
// a relative one that reads as an address ("198.51.100.7:1") names no
// client. Without TrustUnixPeers every call over the socket is the one
// client ip:unknown, whatever path its client bound: it cannot take a
// quota per path, nor pass for a trusted proxy (127.0.0.1:1) whose
// forwarding and user metadata would be believed.
func TestAUnixPeerCannotNameAnAddressByBindingItsSocket(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir) // the client binds relative paths: they are made here
	var (
		mu       sync.Mutex
		subjects []string
	)
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	limits, err := grpclimit.New(sluice.NewLimiter(store), grpclimit.Options{Limits: httplimit.Options{
		Plans:          []*httplimit.Plan{plan("free", sluice.PerMinute(100))},
		TrustedProxies: []netip.Prefix{prefix("127.0.0.0/8")},
		UserHeader:     "x-user-id",
		Observer: func(res *httplimit.Result, _ time.Duration, err error) {
			if err == nil {
				mu.Lock()
				subjects = append(subjects, res.Identity.Subject)
				mu.Unlock()
			}
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(limits.UnaryInterceptor()))
	srv.RegisterService(&echoService, nil)
	lis, err := net.Listen("unix", "app.sock")
	if err != nil {
		t.Fatalf("a Unix socket: %v", err)
	}
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)

	for _, c := range []struct {
		bound string
		md    []string
	}{
		{"198.51.100.7:1", nil},
		{"198.51.100.8:1", nil},
		{"127.0.0.1:1", []string{"x-forwarded-for", "203.0.113.9"}},
		{"127.0.0.2:1", []string{"x-user-id", "alice"}},
	} {
		d := net.Dialer{LocalAddr: &net.UnixAddr{Net: "unix", Name: c.bound}}
		conn, err := grpc.NewClient("passthrough:///app", grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
				return d.DialContext(ctx, "unix", "app.sock")
			}))
		if err != nil {
			t.Fatal(err)
		}
		_, err = say(context.Background(), conn, methodSay, c.md...)
		conn.Close()
		if err != nil {
			t.Fatalf("bound to %q: %v", c.bound, err)
		}
		mu.Lock()
		got := subjects[len(subjects)-1]
		mu.Unlock()
		if got != "ip:unknown" {
			t.Errorf("a Unix peer bound to %q (metadata %q) is the client %q, want ip:unknown", c.bound, c.md, got)
		}
	}
}
