package grpclimit_test

import (
	"context"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/grpclimit"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// A sidecar that reaches the service over a Unix-domain socket (Envoy's
// pipe address) is a trusted proxy when the limits say TrustUnixPeers, as
// it is for the HTTP middleware: the clients its forwarding metadata names
// are limited apart. Without it, every call over the socket is one client.
func TestUnixPeersAreTrustedOnlyWhenTheLimitsSaySo(t *testing.T) {
	t.Parallel()
	for _, trust := range []bool{true, false} {
		var (
			mu       sync.Mutex
			subjects []string
		)
		o := httplimit.Options{
			Plans:          []*httplimit.Plan{plan("free", sluice.PerMinute(1))},
			TrustUnixPeers: trust,
			Observer: func(res *httplimit.Result, _ time.Duration, err error) {
				if err == nil {
					mu.Lock()
					subjects = append(subjects, res.Identity.Subject)
					mu.Unlock()
				}
			},
		}
		store := memory.New()
		t.Cleanup(func() { store.Close() })
		limits, err := grpclimit.New(sluice.NewLimiter(store), grpclimit.Options{Limits: o})
		if err != nil {
			t.Fatal(err)
		}
		srv := grpc.NewServer(grpc.ChainUnaryInterceptor(limits.UnaryInterceptor()))
		srv.RegisterService(&echoService, nil)
		path := filepath.Join(t.TempDir(), "app.sock")
		lis, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		go srv.Serve(lis)
		t.Cleanup(srv.Stop)
		conn, err := grpc.NewClient("unix://"+path, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })

		ctx := context.Background()
		_, first := say(ctx, conn, methodSay, "x-forwarded-for", "203.0.113.1")
		_, second := say(ctx, conn, methodSay, "x-forwarded-for", "203.0.113.2")
		mu.Lock()
		got := append([]string(nil), subjects...)
		mu.Unlock()
		if trust {
			if first != nil || second != nil {
				t.Errorf("trusted Unix peer: two forwarded clients: %v, %v; want both admitted", first, second)
			}
			if len(got) != 2 || got[0] != "ip:203.0.113.1" || got[1] != "ip:203.0.113.2" {
				t.Errorf("trusted Unix peer: subjects %q, want the forwarded clients", got)
			}
			continue
		}
		if first != nil || status.Code(second) != codes.ResourceExhausted {
			t.Errorf("untrusted Unix peer: %v, %v; want the second call refused (one client)", first, second)
		}
		for _, s := range got {
			if s != "ip:unknown" {
				t.Errorf("untrusted Unix peer limited as %q, want ip:unknown", s)
			}
		}
	}
}
