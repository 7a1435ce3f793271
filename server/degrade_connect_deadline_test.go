package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/degrade"
)

// connectService answers Connect unary calls as connect-go's
// handler does: the call's deadline is its Connect-Timeout-Ms header
// (1 to 10 digits of milliseconds), and a call whose deadline passes before
// its 20 ms of work ends is answered deadline_exceeded, which the Connect
// protocol maps to HTTP 504 (connect-go's connectCodeToHTTP, the Connect
// protocol's table: deadline_exceeded → 504 Gateway Timeout).
func connectService(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	ctx := r.Context()
	if v := r.Header.Get("Connect-Timeout-Ms"); v != "" {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || len(v) > 10 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"code":"invalid_argument","message":"bad Connect-Timeout-Ms"}`))
			return
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(ms)*time.Millisecond)
		defer cancel()
	}
	w.Header().Set("Content-Type", "application/json")
	select {
	case <-time.After(20 * time.Millisecond):
		w.Write([]byte(`{}`))
	case <-ctx.Done():
		w.WriteHeader(http.StatusGatewayTimeout)
		w.Write([]byte(`{"code":"deadline_exceeded","message":"context deadline exceeded"}`))
	}
}

// A Connect call's deadline (Connect-Timeout-Ms, the Connect protocol's
// grpc-timeout: connect-go, connect-es and buf's clients send it) is its
// caller's choice, exactly as docs/decisions.md says of a gRPC call's
// grpc-timeout: "What ends a call at or after its own deadline … is its
// caller's choice, as a cancellation is, and counts as neither: a
// stranger's 1 ms deadlines made a healthy grpc-go service reset every
// call, an error rate of 1". A connect-go service (which also serves gRPC
// and gRPC-Web on the same paths) gives a Connect call up at its deadline
// and answers HTTP 504. One client, far within its rate limit, sending its
// Connect calls with Connect-Timeout-Ms: 1 to a healthy service, drives
// the error rate to 1 and raises the level for every client: the attack
// b892b180 and c4e52447 closed for grpc-timeout, open for the third
// protocol of the family.
func TestAConnectCallersOwnDeadlineIsNoUpstreamFailure(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(connectService))
	t.Cleanup(up.Close)
	srv, l := serveYAML(t, "upstream: "+up.URL+`
plans:
  anonymous:
    limits: [{name: per-second, algorithm: gcra, quantity: 100000, window: 1s}]
anonymous_plan: anonymous
degradation:
  min_answers: 5
  interval: 1m
  min_dwell: 1m
  levels:
    elevated: {enter: {error_rate: 0.5}, leave: {error_rate: 0.1}}
`+testAdmin)
	base := "http://" + l.public
	srv.SampleNow()

	call := func(timeout string) int {
		req, _ := http.NewRequest("POST", base+"/orders.v1.Orders/Get", strings.NewReader(`{}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Connect-Protocol-Version", "1")
		if timeout != "" {
			req.Header.Set("Connect-Timeout-Ms", timeout)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return 0
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := call(""); s != http.StatusOK {
		t.Fatalf("a call without a deadline: %d, want 200 (the service is healthy)", s)
	}
	srv.SampleNow()
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				s := call("1")
				mu.Lock()
				statuses[s]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if statuses[http.StatusGatewayTimeout] < 30 {
		t.Fatalf("statuses %v: the premise (the service gives calls up at their 1 ms deadline) failed", statuses)
	}
	if l := srv.SampleNow(); l != degrade.Normal {
		s := srv.Degradation().Signals
		t.Errorf("one client's Connect calls with a 1 ms deadline, the service healthy: level %v (answers %d, failures %d, error rate %v); want normal",
			l, s.Answers, s.Failures, s.ErrorRate)
	}
}
