package server_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// listening is a Server serving on real loopback listeners, as sluice serve
// runs it: addresses as host:port.
type listening struct{ public, admin string }

// serveOn serves srv with Serve on two loopback listeners (the production
// http.Servers: bounds, timeouts) until the test ends; Serve must then
// return nil.
func serveOn(t *testing.T, srv *server.Server) listening {
	t.Helper()
	ls := server.Listeners{Public: listenLoopback(t), Admin: listenLoopback(t)}
	l := listening{public: ls.Public.Addr().String(), admin: ls.Admin.Addr().String()}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ls) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return l
}

func listenLoopback(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// withToken is a gRPC dial option that sends token as the caller's bearer
// token with every call ("" sends none).
func withToken(token string) grpc.DialOption {
	return grpc.WithUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if token != "" {
			ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	})
}

// loadServer writes cfgText to dir/sluice.yaml and returns a server of it on
// the memory store, which reloads from that file (and watches it, with
// watch), and the file's path.
func loadServer(t *testing.T, dir, cfgText string, watch ...bool) (*server.Server, string) {
	t.Helper()
	return loadServerOn(t, memory.New(), dir, cfgText, watch...)
}

// loadServerOn is loadServer on store, which it closes when t ends.
func loadServerOn(t *testing.T, store *memory.Store, dir, cfgText string, watch ...bool) (*server.Server, string) {
	t.Helper()
	t.Cleanup(func() { store.Close() })
	file := filepath.Join(dir, "sluice.yaml")
	if err := os.WriteFile(file, []byte(cfgText), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	o := server.Options{Config: cfg, Store: store, Memory: store, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Load: func() (*config.Config, error) { return config.Load(file) }}
	if len(watch) > 0 && watch[0] {
		o.WatchFile = file
	}
	srv, err := server.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return srv, file
}
