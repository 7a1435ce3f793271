package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/server"
)

// A store that cannot be reached leaves the instance ready under
// on_store_error local (it still decides: pulling every instance out of the
// load balancer would make a shared store's outage the API's), and not
// ready under deny, which can only refuse.
func TestReadyWhileTheStoreIsDown(t *testing.T) {
	down := func(o *server.Options) {
		o.Ready = func(context.Context) error {
			return fmt.Errorf("redis: %w: connection refused", sluice.ErrStoreUnavailable)
		}
	}
	for _, c := range []struct {
		store string
		code  int
		body  string
	}{
		{"", http.StatusOK, "ready, deciding by on_store_error local: the store is not reachable: redis:"},
		{"store: {type: redis, redis: {addresses: [\"127.0.0.1:1\"], on_store_error: allow}}\n", http.StatusOK, "ready, deciding by on_store_error allow"},
		{"store: {type: redis, redis: {addresses: [\"127.0.0.1:1\"], on_store_error: deny}}\n", http.StatusServiceUnavailable,
			"store not reachable, and on_store_error deny refuses every request: redis:"},
	} {
		f := newFixtureWith(t, testConfig+c.store, down)
		r := f.do(t, "GET", "/readyz", "", nil)
		if body := readAll(t, r); r.StatusCode != c.code || !strings.HasPrefix(body, c.body) {
			t.Errorf("%q: /readyz %d %q, want %d %q", c.store, r.StatusCode, body, c.code, c.body)
		}
	}
}

// Told to stop, a server with shutdown.delay stays up that long: /readyz
// answers 503, requests are still served, each answer closing its
// connection; then the listeners close.
func TestShutdownDelayKeepsServingWhileNotReady(t *testing.T) {
	srv, _ := loadServer(t, t.TempDir(), testConfig+"shutdown: {delay: 600ms, drain: 2s}\n")
	ls := server.Listeners{Public: listenLoopback(t), Admin: listenLoopback(t)}
	public, admin := "http://"+ls.Public.Addr().String(), "http://"+ls.Admin.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ls) }()
	get := func(url string) (*http.Response, string, error) {
		r, err := http.Get(url)
		if err != nil {
			return nil, "", err
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		return r, string(b), nil
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if r, _, err := get(admin + "/readyz"); err == nil && r.StatusCode == http.StatusOK {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("not ready within 5 s: %v", err)
		}
	}
	stop := time.Now()
	cancel()
	time.Sleep(100 * time.Millisecond)
	if r, body, err := get(admin + "/readyz"); err != nil || r.StatusCode != http.StatusServiceUnavailable || body != "shutting down\n" {
		t.Errorf("/readyz during the delay: %v %v %q, want 503 shutting down", r, err, body)
	}
	r, body, err := get(public + "/healthz")
	if err != nil || r.StatusCode != http.StatusOK || !r.Close {
		t.Errorf("a request during the delay: %v, %q, closes its connection %v; want 200 and Connection: close", err, body, r != nil && r.Close)
	}
	select {
	case err := <-done:
		t.Fatalf("Serve returned %v after %v, before the 600ms delay", err, time.Since(stop))
	default:
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if took := time.Since(stop); took < 600*time.Millisecond || took > 3*time.Second {
		t.Errorf("Serve returned %v after it was told to stop, with a delay of 600ms", took)
	}
	if _, _, err := get(public + "/healthz"); err == nil {
		t.Errorf("the public listener still answers after Serve returned")
	}
}
