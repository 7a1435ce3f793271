package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/server"
)

// A shutdown closes every listener at once, the admin listener with the
// public one, and they share one drain: with a request in flight on the
// public listener, a new connection to the admin listener (the decision
// API, forward-auth) is refused as one to the public listener is — not
// accepted while the public listener drains, then cut off at once when the
// drain's deadline has passed.
func TestShutdownClosesEveryListenerAtOnce(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 1)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/health" { // exempt: in flight until released
			arrived <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		w.Write([]byte("upstream"))
	}))
	defer upstream.Close()
	defer close(release)
	srv, _ := loadServer(t, t.TempDir(), "upstream: "+upstream.URL+"\n"+testConfig+"shutdown: {drain: 3s}\n")
	ls := server.Listeners{Public: listenLoopback(t), Admin: listenLoopback(t)}
	public, admin := "http://"+ls.Public.Addr().String(), "http://"+ls.Admin.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ls) }()
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 2 * time.Second}
	get := func(url string) (int, error) {
		r, err := fresh.Get(url)
		if err != nil {
			return 0, err
		}
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
		return r.StatusCode, nil
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if code, err := get(admin + "/healthz"); err == nil && code == http.StatusOK {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("admin not serving within 5 s: %v", err)
		}
	}
	go get(public + "/api/health")
	select {
	case <-arrived:
	case <-time.After(5 * time.Second):
		t.Fatal("the request in flight did not reach the upstream")
	}
	cancel() // no shutdown.delay: the listeners close now
	time.Sleep(300 * time.Millisecond)
	if code, err := get(public + "/healthz"); err == nil {
		t.Fatalf("the public listener answered %d after the shutdown began", code)
	}
	if code, err := get(admin + "/healthz"); err == nil {
		t.Errorf("the admin listener answered %d 300ms into the shutdown, while the public listener drains; want it closed with it", code)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
}
