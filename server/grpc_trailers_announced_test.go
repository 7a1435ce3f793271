package server_test

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"
)

// An upstream (net/http-based, as grpc.Server.ServeHTTP is) that announces
// its trailers (Trailer: Grpc-Status) but ends the answer without any (a
// broken service) is read by grpc-go as INTERNAL "server closed the stream
// without sending trailers". Behind sluice the client reads the same: sluice
// adds its RateLimit fields only to trailers that carry the upstream's
// status, not a trailers block of its own (read as UNKNOWN with an empty
// message, the upstream's failure hidden).
func TestAnnouncedTrailersNeverSentGetNoneFromSluice(t *testing.T) {
	upstream := &http.Server{
		Protocols: new(http.Protocols),
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/grpc")
			w.Header().Set("Trailer", "Grpc-Status, Grpc-Message")
			w.WriteHeader(http.StatusOK)
			w.Write([]byte{0, 0, 0, 0, 2, 0x08, 0x01}) // HealthCheckResponse{SERVING}
			// returns without the announced trailers
		}),
	}
	upstream.Protocols.SetUnencryptedHTTP2(true)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go upstream.Serve(ln)
	t.Cleanup(func() { upstream.Close() })

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	call := func(addr string) (error, metadata.MD) {
		var trailer metadata.MD
		_, err := healthpb.NewHealthClient(dialInsecure(t, addr)).Check(ctx, &healthpb.HealthCheckRequest{}, grpc.Trailer(&trailer))
		return err, trailer
	}
	direct, _ := call(ln.Addr().String())
	if grpcstatus.Code(direct) != codes.Internal {
		t.Fatalf("the upstream called directly: %v; the test expects grpc-go's INTERNAL for a stream ended without trailers", direct)
	}

	srv, _ := loadServer(t, t.TempDir(), "upstream: h2c://"+ln.Addr().String()+`
plans:
  anonymous:
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m}]
anonymous_plan: anonymous
`)
	err, trailer := call(serveOn(t, srv).public)
	if grpcstatus.Code(err) != codes.Internal || len(trailer) != 0 {
		t.Errorf("behind sluice: %v, trailers %v; want the upstream's own failure, %v, and no trailers (the upstream sent none)", err, trailer, direct)
	}
}
