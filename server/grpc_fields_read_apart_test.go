package server_test

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/sluice-dev/sluice/degrade"
	"github.com/sluice-dev/sluice/server"
)

// readApartUpstream is a healthy grpc-go service doing 20 ms of work per
// call (which grpc-go gives up, resetting the stream, at the deadline it
// reads), behind sluice with 3 calls a minute and a level entered at an
// error rate of 0.5; it returns an HTTP/2 client to sluice, sluice's
// address, the server and the calls the service received.
func readApartUpstream(t *testing.T) (*http.Client, string, *server.Server, *atomic.Int64) {
	t.Helper()
	var calls atomic.Int64
	gs := grpc.NewServer(grpc.UnknownServiceHandler(func(_ any, ss grpc.ServerStream) error {
		calls.Add(1)
		var req healthpb.HealthCheckRequest
		if err := ss.RecvMsg(&req); err != nil {
			return err
		}
		time.Sleep(20 * time.Millisecond)
		return ss.SendMsg(&healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING})
	}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(ln)
	t.Cleanup(gs.Stop)
	srv, _ := loadServer(t, t.TempDir(), "upstream: h2c://"+ln.Addr().String()+"\n"+grpcConfig+`
degradation:
  min_answers: 2
  interval: 30s
  min_dwell: 30s
  levels:
    elevated: {enter: {error_rate: 0.5}, leave: {error_rate: 0.01}}
`)
	public := serveOn(t, srv).public
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	t.Cleanup(tr.CloseIdleConnections)
	srv.SampleNow()
	return &http.Client{Transport: tr, Timeout: 5 * time.Second}, public, srv, &calls
}

// readApartCall sends a call to sluice at public with the fields of h, and
// returns its HTTP status and grpc-status.
func readApartCall(t *testing.T, hc *http.Client, public string, h http.Header) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", "http://"+public+"/orders.v1.Orders/Get", bytes.NewReader([]byte{0, 0, 0, 0, 0}))
	req.Header = h
	req.Header.Set("Te", "trailers")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if s := resp.Trailer.Get("Grpc-Status"); s != "" {
		return resp.StatusCode, s
	}
	return resp.StatusCode, resp.Header.Get("Grpc-Status")
}

// readApartUnsent checks that the calls refused did not reach the service,
// moved no signal, and spent nothing: the client's 3 calls a minute are
// all still there.
func readApartUnsent(t *testing.T, hc *http.Client, public string, srv *server.Server, calls *atomic.Int64) {
	t.Helper()
	if n := calls.Load(); n != 0 {
		t.Errorf("the service received %d of the calls refused; want none", n)
	}
	if l := srv.SampleNow(); l != degrade.Normal || srv.Degradation().Signals.Answers != 0 {
		t.Errorf("after the calls refused: level %v, signals %+v; want normal, no answer counted", l, srv.Degradation().Signals)
	}
	for i := range 3 {
		if st, code := readApartCall(t, hc, public, http.Header{"Content-Type": {"application/grpc"}}); code != "0" {
			t.Fatalf("well-formed call %d of the 3 a minute: %d grpc-status %q; want 0 (the refusals spent nothing)", i+1, st, code)
		}
	}
}

// A gRPC call with two grpc-timeout fields that differ has no one
// deadline: sluice would read the first (100S), grpc-go's transport obeys
// the last (1m: one millisecond) and gives the call up at once. Were it
// forwarded, a stranger's calls, far within its rate limit, would be the
// upstream's failures (the deadline sluice read not yet passed) and raise
// the level for every client. It is refused before the limits decide:
// INVALID_ARGUMENT, unsent, nothing spent.
func TestACallWhoseGRPCTimeoutsDifferIsRefusedUnsent(t *testing.T) {
	hc, public, srv, calls := readApartUpstream(t)
	for i := range 5 {
		st, code := readApartCall(t, hc, public, http.Header{"Content-Type": {"application/grpc"}, "Grpc-Timeout": {"100S", "1m"}})
		if st != 200 || code != "3" {
			t.Fatalf("call %d with grpc-timeout 100S, then 1m: %d grpc-status %q; want 200 grpc-status 3 (INVALID_ARGUMENT)", i+1, st, code)
		}
	}
	readApartUnsent(t, hc, public, srv, calls)
}

// Content-Type is a singleton field (RFC 9110 §8.3). A request with two
// that differ, text/plain then application/grpc, would be no gRPC call to
// sluice (it reads the first: no deadline, no grpc-status) and one to
// grpc-go (any gRPC Content-Type will do), which obeys its grpc-timeout of
// 1m and resets the stream: a 502, the upstream's failure. It is refused
// with a 400 problem before the limits decide, unsent, nothing spent.
func TestARequestWhoseContentTypesDifferIsRefusedUnsent(t *testing.T) {
	hc, public, srv, calls := readApartUpstream(t)
	for i := range 5 {
		st, code := readApartCall(t, hc, public, http.Header{"Content-Type": {"text/plain", "application/grpc"}, "Grpc-Timeout": {"1m"}})
		if st != http.StatusBadRequest || code != "" {
			t.Fatalf("call %d with Content-Type text/plain, then application/grpc: %d grpc-status %q; want 400", i+1, st, code)
		}
	}
	readApartUnsent(t, hc, public, srv, calls)
}
