package server_test

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/sluice-dev/sluice/degrade"
)

// A gRPC call to a method the service does not have is answered
// UNIMPLEMENTED by grpc-go itself ("unknown service"), by a healthy
// server, at once: the caller chose the method, as it chose the deadline
// that docs/decisions.md rules "its caller's choice … and counts as
// neither" (a stranger's 1 ms deadlines were an error rate of 1). It is
// HTTP's 404, a name the server does not serve, not a failure of the
// server, though StatusOfGRPC maps it to 501: one client within its rate
// limit, calling /no.Such/Method, raises no level.
func TestACallToAnUnknownMethodIsNoUpstreamFailure(t *testing.T) {
	gs := grpc.NewServer()
	healthpb.RegisterHealthServer(gs, health.NewServer()) // healthy: SERVING
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(ln)
	t.Cleanup(gs.Stop)
	srv, _ := loadServer(t, t.TempDir(), "upstream: h2c://"+ln.Addr().String()+"\n"+strings.Replace(grpcConfig, "quantity: 3,", "quantity: 100000,", 1)+`
degradation:
  min_answers: 5
  interval: 1m
  min_dwell: 1m
  levels:
    elevated: {enter: {error_rate: 0.5}, leave: {error_rate: 0.1}}
`)
	public := serveOn(t, srv).public
	srv.SampleNow()

	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	t.Cleanup(tr.CloseIdleConnections)
	hc := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	call := func(path string) string {
		req, _ := http.NewRequest("POST", "http://"+public+path, bytes.NewReader([]byte{0, 0, 0, 0, 0}))
		req.Header.Set("Content-Type", "application/grpc")
		req.Header.Set("Te", "trailers")
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
	if c := call("/grpc.health.v1.Health/Check"); c != "0" {
		t.Fatalf("the health check: grpc-status %q, want 0 (the service is healthy)", c)
	}
	for range 20 {
		if c := call("/no.Such/Method"); c != "12" {
			t.Fatalf("a call to an unknown method: grpc-status %q, want 12 (UNIMPLEMENTED, grpc-go's answer)", c)
		}
	}
	if l := srv.SampleNow(); l != degrade.Normal {
		s := srv.Degradation().Signals
		t.Errorf("one client's 20 calls to a method the healthy service does not have: level %v (answers %d, failures %d, error rate %v); want normal",
			l, s.Answers, s.Failures, s.ErrorRate)
	}
}
