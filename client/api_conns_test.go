package client_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/client"
)

// A Client made without WithHTTPClient keeps as many idle connections to
// the server as a busy service has checks in flight, and reuses them:
// http.DefaultTransport's 2 per host would make a service checking each
// of its requests from 8 goroutines open a connection (a TLS handshake)
// for nearly every check.
//
// Ten rounds of 8 checks at once (the server answers once all 8 are at
// it): 8 connections would do.
func TestConcurrentChecksReuseTheirConnections(t *testing.T) {
	t.Parallel()
	const workers, rounds = 8, 10
	var conns atomic.Int64
	var mu sync.Mutex
	at := 0
	gate := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		at++
		g := gate
		if at == workers {
			close(gate)
			at, gate = 0, make(chan struct{})
		}
		mu.Unlock()
		select {
		case <-g:
		case <-time.After(3 * time.Second):
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"allowed":true,"identity":"user","cost":1,"remaining":1000}`))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c := client.New(srv.URL)
	for range rounds {
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				if _, err := c.Check(context.Background(), client.CheckRequest{User: "u1"}); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		time.Sleep(10 * time.Millisecond) // let the connections go back to the pool
	}
	if n := conns.Load(); n > 2*workers {
		t.Errorf("%d rounds of %d concurrent checks opened %d connections to the decision API; want them reused (%d would do)",
			rounds, workers, n, workers)
	}
}
