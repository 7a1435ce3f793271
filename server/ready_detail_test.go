package server_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/server"
)

// /readyz needs no credentials: a stranger learns whether the instance is
// ready, and how it decides, but never why its store is not reachable (the
// store's address, its dial error); a caller with the read scope does.
func TestReadyTellsTheStoresErrorOnlyToReaders(t *testing.T) {
	const secret = "10.1.2.3:6379: dial tcp: connection refused"
	logs := &realtest.Buffer{}
	down := func(o *server.Options) {
		o.Logger = slog.New(slog.NewTextHandler(logs, nil))
		o.Ready = func(context.Context) error {
			return fmt.Errorf("redis %s: %w", secret, sluice.ErrStoreUnavailable)
		}
	}
	for _, c := range []struct {
		store string
		code  int
	}{
		{"", http.StatusOK},
		{"store: {type: redis, redis: {addresses: [\"127.0.0.1:1\"], on_store_error: deny}}\n", http.StatusServiceUnavailable},
	} {
		f := newFixtureWith(t, testConfig+c.store+"admin:\n  loopback_scopes: []\n"+strings.TrimPrefix(testAdmin, "\nadmin:\n"), down)
		stranger := f.do(t, "GET", "/readyz", "", map[string]string{server.TokenHeader: ""})
		if body := readAll(t, stranger); stranger.StatusCode != c.code || strings.Contains(body, "10.1.2.3") || strings.Contains(body, "dial") {
			t.Errorf("%q: a stranger's /readyz: %d %q, want %d without the store's error", c.store, stranger.StatusCode, body, c.code)
		}
		reader := f.do(t, "GET", "/readyz", "", nil)
		if body := readAll(t, reader); reader.StatusCode != c.code || !strings.Contains(body, secret) {
			t.Errorf("%q: a reader's /readyz: %d %q, want %d with the store's error", c.store, reader.StatusCode, body, c.code)
		}
	}
	if n := strings.Count(logs.String(), secret); n != 2 {
		t.Errorf("the store's error is logged %d times, want once per server (when it stopped answering):\n%s", n, logs.String())
	}
}
