package server_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// A shutdown has one deadline, shutdown.drain after the listeners close,
// shared by the requests in flight and then notify's queue: with a request
// that never ends and a receiver that never answers, Serve returns once
// the drain is over, not after a second drain for the queue — what
// deploy/'s stop timeouts (shutdown.delay + shutdown.drain, and the
// store's close) count on. What notify could not send is logged and
// counted as dropped.
func TestShutdownDrainsRequestsAndNotifyWithinOneDrain(t *testing.T) {
	const drain = 2 * time.Second
	release := make(chan struct{})
	hung := func(arrived chan<- struct{}) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			arrived <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
	}
	posted, stuck := make(chan struct{}, 4), make(chan struct{}, 1)
	hook := httptest.NewServer(hung(posted))
	defer hook.Close()
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/health" { // exempt: in flight until the end
			hung(stuck)(w, r)
			return
		}
		w.Write([]byte("upstream"))
	}))
	defer upstream.Close()
	defer close(release)

	file := filepath.Join(t.TempDir(), "sluice.yaml")
	text := "upstream: " + upstream.URL + "\n" + notifyConfig(t, hook.URL, "s") + "shutdown: {drain: " + drain.String() + "}\n"
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New()
	defer store.Close()
	var logs realtest.Buffer
	srv, err := server.New(server.Options{Config: cfg, Store: store, Memory: store, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ls := server.Listeners{Public: listenLoopback(t), Admin: listenLoopback(t)}
	public := "http://" + ls.Public.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ls) }()

	get := func(path string, key string) error {
		req, _ := http.NewRequest(http.MethodGet, public+path, nil)
		if key != "" {
			req.Header.Set("X-API-Key", key)
		}
		r, err := http.DefaultClient.Do(req)
		if err == nil {
			io.Copy(io.Discard, r.Body)
			r.Body.Close()
		}
		return err
	}
	for range 3 { // crosses 50% and 100%: two notifications
		if err := get("/api/search", "demo-free-key"); err != nil {
			t.Fatal(err)
		}
	}
	go get("/api/health", "")
	for _, c := range []chan struct{}{posted, stuck} {
		select {
		case <-c:
		case <-time.After(10 * time.Second):
			t.Fatal("the first notification's post or the request to /api/health did not arrive")
		}
	}

	stop := time.Now()
	cancel()
	select {
	case <-done:
	case <-time.After(4 * drain):
		t.Fatalf("Serve did not return within %v of being told to stop", 4*drain)
	}
	if took := time.Since(stop); took < drain-100*time.Millisecond || took > drain+drain/2 {
		t.Errorf("Serve returned %v after it was told to stop, with a request in flight and a receiver that does not answer; want the drain, %v", took, drain)
	}
	if !strings.Contains(logs.String(), "notifications not sent at shutdown") || !strings.Contains(logs.String(), "dropped=2") {
		t.Errorf("want both notifications logged as not sent; log:\n%s", logs.String())
	}
}
