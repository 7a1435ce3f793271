package server_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/server"
)

// switchedStore is its Store until down is set, then fails every call as
// a store that cannot be reached.
type switchedStore struct {
	sluice.Store
	down atomic.Bool
}

func (s *switchedStore) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	if s.down.Load() {
		return sluice.ErrStoreUnavailable
	}
	return s.Store.Apply(ctx, checks, out)
}

// While the store is down, the admin listener's handlers that cannot
// decide answer every request as they do one, but write their warning
// once, not once per request: an outage under load must not flood the log.
func TestStoreDownWarnsOncePerMessage(t *testing.T) {
	const requests = 5
	var logs realtest.Buffer
	var store *switchedStore
	cfg := settleConfig + "settle: {secret_file: " + settleSecret(t, "ab") + "}\n"
	f := newFixtureWith(t, cfg, func(o *server.Options) {
		store = &switchedStore{Store: o.Store}
		o.Store, o.Logger = store, slog.New(slog.NewTextHandler(&logs, nil))
	})
	r := f.do(t, "POST", "/v1/check", `{"subject":"batch-7","method":"POST","path":"/api/complete"}`, nil)
	var out struct{ Settle string }
	if err := json.NewDecoder(r.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if !strings.Contains(out.Settle, ".") {
		t.Fatalf("/v1/check with the store up: %d, settle %q; want a signed settle id", r.StatusCode, out.Settle)
	}
	store.down.Store(true)

	for _, c := range []struct {
		name, msg    string
		method, path string
		body         string
		header       map[string]string
		status       int
	}{
		{"decision API", "decision API: no decision", "POST", "/v1/check", `{"user":"u"}`, nil, http.StatusServiceUnavailable},
		{"forward-auth", "forward-auth: no decision, admitting", "GET", "/v1/forward-auth", "",
			map[string]string{"X-Forwarded-Method": "GET", "X-Forwarded-Uri": "/api/x"}, http.StatusOK},
		{"settle", "settle: not settled", "POST", "/v1/settle", `{"id":"` + out.Settle + `","status":200}`, nil, http.StatusServiceUnavailable},
	} {
		for range requests {
			r := f.do(t, c.method, c.path, c.body, c.header)
			r.Body.Close()
			if r.StatusCode != c.status {
				t.Errorf("%s with the store down: %d, want %d", c.name, r.StatusCode, c.status)
			}
		}
		if n := strings.Count(logs.String(), `msg="`+c.msg+`"`); n != 1 {
			t.Errorf("%s: %d requests with the store down wrote %d lines %q, want 1:\n%s", c.name, requests, n, c.msg, logs.String())
		}
	}
}
