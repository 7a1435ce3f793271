package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A server that goes away mid-run leaves requests that got no answer:
// the requests line and its rate count the answered ones alone (the
// server's own count), the latencies are of those, and the run exits 1
// saying how many got no answer, so that a script does not take the
// connection errors, each refused in microseconds, for the server's speed.
func TestBenchCountsTheAnsweredWhenTheServerGoesAway(t *testing.T) {
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		time.Sleep(5 * time.Millisecond)
		served.Add(1)
	}))
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		time.Sleep(300 * time.Millisecond)
		// No new connection from here: a request the closing cuts is
		// not retried on another and counted there as well.
		srv.Listener.Close()
		srv.CloseClientConnections()
		srv.Close()
	}()
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"bench", "-d", "1s", "-c", "2", srv.URL}, &out, &errOut)
	<-gone
	m := regexp.MustCompile(`requests  (\d+) in [0-9.]+s`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no requests line:\n%s", out.String())
	}
	reported, _ := strconv.Atoi(m[1])
	// The server may count a request whose answer the closing cut: one
	// on each connection at most.
	if n := served.Load(); int64(reported) > n || int64(reported) < n-2 {
		t.Errorf("requests %d reported, the server answered %d (2 of them perhaps cut):\n%s", reported, n, out.String())
	}
	p50 := regexp.MustCompile(`p50 ([0-9.]+)ms`).FindStringSubmatch(out.String())
	if p50 == nil {
		t.Fatalf("no latency line:\n%s", out.String())
	}
	if ms, _ := strconv.ParseFloat(p50[1], 64); ms < 5 {
		t.Errorf("p50 %sms of a server that takes 5ms to answer:\n%s", p50[1], out.String())
	}
	if code != 1 || !strings.Contains(errOut.String(), "got no answer") || strings.Count(errOut.String(), "\n") != 1 {
		t.Errorf("exit %d, stderr %q; want 1 and one line saying how many got no answer", code, errOut.String())
	}
}
