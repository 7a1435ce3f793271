package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/server"
)

// A drain that ends with requests still in flight says so, and names the
// setting that bounds it, rather than a bare "context deadline exceeded".
func TestADrainCutShortSaysWhy(t *testing.T) {
	arrived, release := make(chan struct{}, 1), make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
	}))
	defer up.Close()
	defer close(release)
	srv, _ := loadServer(t, t.TempDir(), "upstream: "+up.URL+"\n"+testConfig+"shutdown: {drain: 1s}\n")
	ls := server.Listeners{Public: listenLoopback(t), Admin: listenLoopback(t)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ls) }()
	go http.Get("http://" + ls.Public.Addr().String() + "/api/slow")
	select {
	case <-arrived:
	case <-time.After(5 * time.Second):
		t.Fatal("the request did not reach the upstream")
	}
	cancel()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "still in flight") || !strings.Contains(err.Error(), "shutdown.drain") {
			t.Errorf("Serve after a drain cut short: %v, want an error saying requests were still in flight after shutdown.drain", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after its drain")
	}
}
