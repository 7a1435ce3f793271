package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// slowRelease is the memory store whose Release takes a store's round trip
// (as Redis's does), counting those that completed.
type slowRelease struct {
	*memory.Store
	took     time.Duration
	released atomic.Int64
}

func (s *slowRelease) Release(ctx context.Context, checks []sluice.Check, leases []int64) error {
	time.Sleep(s.took)
	err := s.Store.Release(ctx, checks, leases)
	s.released.Add(1)
	return err
}

// serveOnSlowRelease serves, on loopback listeners, the configuration of
// upstream and plans: every request is decided by a concurrency limit of
// 5 with a lease of an hour, on a store whose Release takes took. It
// returns the listeners, cancel to stop Serve, and what Serve returns.
func serveOnSlowRelease(t *testing.T, upstream, plans string, took time.Duration) (*slowRelease, server.Listeners, context.CancelFunc, <-chan error) {
	t.Helper()
	store := &slowRelease{Store: memory.New(), took: took}
	t.Cleanup(func() { store.Store.Close() })
	file := filepath.Join(t.TempDir(), "sluice.yaml")
	if err := os.WriteFile(file, []byte("upstream: "+upstream+"\n"+plans), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{Config: cfg, Store: store, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ls := server.Listeners{Public: listenLoopback(t), Admin: listenLoopback(t)}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ls) }()
	return store, ls, cancel, done
}

const slotPlans = `plans:
  anonymous:
    limits: [{name: sockets, algorithm: concurrency, quantity: 5, window: 1h}]
anonymous_plan: anonymous
`

// A WebSocket admitted by a concurrency limit holds its slot until it
// ends, and Serve ends it at shutdown (see
// TestShutdownClosesSwitchedConnections). The http.Server no longer knows
// the connection, yet Serve waits for its handler to give the slot back
// before it returns: sluice serve closes the store next, and on Redis a
// slot not given back stays held for its lease (here an hour), refusing
// the clients that reconnect elsewhere.
func TestShutdownGivesBackTheSlotsOfTheSwitchedConnectionsItCloses(t *testing.T) {
	store, ls, cancel, done := serveOnSlowRelease(t, streamingUpstream(t).URL, slotPlans+"shutdown: {drain: 3s}\n", 300*time.Millisecond)
	conn, rd := switchToEcho(t, ls.Public.Addr().String())
	fmt.Fprintf(conn, "hello\n")
	if got, err := rd.ReadString('\n'); err != nil || got != "echo hello\n" {
		t.Fatalf("%q, %v", got, err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
	if n := store.released.Load(); n != 1 {
		t.Errorf("Serve returned with %d of the WebSocket's 1 slot given back to the store", n)
	}
}

// A request still running when shutdown.drain ends is cut off, and its
// handler, whose context is then done, still gives back its slot: Serve
// waits for it (up to a second past the drain) before it returns, as it
// waits for the requests that end within the drain.
func TestShutdownWaitsForTheRequestsItCutsOffToGiveBackTheirSlots(t *testing.T) {
	arrived := make(chan struct{}, 1)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-r.Context().Done() // never answers
	}))
	defer upstream.Close()
	store, ls, cancel, done := serveOnSlowRelease(t, upstream.URL, slotPlans+"shutdown: {drain: 1s}\n", 300*time.Millisecond)
	go func() {
		if r, err := http.Get("http://" + ls.Public.Addr().String() + "/hang"); err == nil {
			io.Copy(io.Discard, r.Body)
			r.Body.Close()
		}
	}()
	select {
	case <-arrived:
	case <-time.After(5 * time.Second):
		t.Fatal("the request did not reach the upstream")
	}
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Error("Serve cut a request off and returned no error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
	if n := store.released.Load(); n != 1 {
		t.Errorf("Serve returned with %d of the cut off request's 1 slot given back to the store", n)
	}
}
