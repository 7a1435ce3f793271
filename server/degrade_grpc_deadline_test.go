package server_test

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/sluice-dev/sluice/degrade"
)

// A gRPC call's deadline (its grpc-timeout) is its caller's choice, as a
// cancellation is. A stranger's calls with a deadline of one millisecond
// to a healthy grpc-go service, which gives each up at its deadline
// (resetting the stream), are no failures of the upstream's: otherwise
// one client well within its rate limit would drive the instance's error
// rate to 1 and raise the level for every client. The caller reads
// DEADLINE_EXCEEDED, as its deadline passed, not UNAVAILABLE.
func TestACallersOwnGRPCDeadlineIsNoUpstreamFailure(t *testing.T) {
	gs := grpc.NewServer(grpc.UnknownServiceHandler(func(_ any, ss grpc.ServerStream) error {
		var req healthpb.HealthCheckRequest
		if err := ss.RecvMsg(&req); err != nil {
			return err
		}
		select { // 20 ms of work, given up when the caller's deadline passes
		case <-time.After(20 * time.Millisecond):
			return ss.SendMsg(&healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING})
		case <-ss.Context().Done():
			return grpcstatus.FromContextError(ss.Context().Err()).Err()
		}
	}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(ln)
	t.Cleanup(gs.Stop)
	srv, _ := loadServer(t, t.TempDir(), "upstream: h2c://"+ln.Addr().String()+"\n"+strings.Replace(grpcConfig, "quantity: 3,", "quantity: 100000,", 1)+`
degradation:
  min_answers: 5
  interval: 200ms
  levels:
    elevated: {enter: {error_rate: 0.5}, leave: {error_rate: 0.1}}
`)
	public := serveOn(t, srv).public

	// The stranger: HTTP/2 without TLS, a call with grpc-timeout 1m (one
	// millisecond), waiting for the answer past its deadline.
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	t.Cleanup(tr.CloseIdleConnections)
	hc := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	call := func(timeout string) string {
		req, _ := http.NewRequest("POST", "http://"+public+"/orders.v1.Orders/Get", bytes.NewReader([]byte{0, 0, 0, 0, 0}))
		req.Header.Set("Content-Type", "application/grpc")
		req.Header.Set("Te", "trailers")
		if timeout != "" {
			req.Header.Set("Grpc-Timeout", timeout)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return "error: " + err.Error()
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if s := resp.Trailer.Get("Grpc-Status"); s != "" {
			return s
		}
		return resp.Header.Get("Grpc-Status")
	}
	if c := call(""); c != "0" {
		t.Fatalf("a call without a deadline: grpc-status %q, want 0 (the service is healthy)", c)
	}
	var mu sync.Mutex
	var codes []string
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 { // a few calls at once, far below the client's rate limit
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				c := call("1m")
				mu.Lock()
				codes = append(codes, c)
				mu.Unlock()
			}
		}()
	}
	deadline := time.Now().Add(3 * time.Second)
	level := degrade.Normal
	for time.Now().Before(deadline) && level == degrade.Normal {
		time.Sleep(10 * time.Millisecond)
		level = srv.Degradation().Level
	}
	close(stop)
	wg.Wait()
	if level != degrade.Normal {
		t.Errorf("one client's calls with a 1 ms deadline raised the level to %v for every client, the upstream healthy (signals %+v)",
			level, srv.Degradation().Signals)
	}
	for _, c := range codes {
		// 0: the service's answer, which a loaded host may let the work
		// finish first for.
		if c != "4" && c != "0" {
			t.Errorf("a call whose deadline passed: %q; want grpc-status 4 (DEADLINE_EXCEEDED)", c)
			break
		}
	}
}
