package server_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/server"
)

// boxCountingStore counts the calls that reach its store.
type boxCountingStore struct {
	sluice.Store
	calls atomic.Int64
}

func (s *boxCountingStore) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	s.calls.Add(1)
	return s.Store.Apply(ctx, checks, out)
}

// TestABoxedClientCostsNoStoreCallThroughTheProxy: once the proxy has
// boxed a client, its requests are refused by the box without a store
// call.
func TestABoxedClientCostsNoStoreCallThroughTheProxy(t *testing.T) {
	cfg := realtest.Replace(t, "testConfig", testConfig, "exempt:", "penalty: {refusals: 2, within: 1m, for: 5m}\nexempt:")
	var counted *boxCountingStore
	f := newFixtureWith(t, cfg, func(o *server.Options) {
		counted = &boxCountingStore{Store: o.Store}
		o.Store = counted
	})
	for range 5 { // 3 admitted, 2 refused: boxed
		f.do(t, "GET", "/api/search", "", nil)
	}
	before := counted.calls.Load()
	for i := range 10 {
		r := f.do(t, "GET", "/api/search", "", nil)
		if body := readAll(t, r); r.StatusCode != 429 || r.Header.Get("Retry-After") != "300" || !strings.Contains(body, "#penalty-box") {
			t.Fatalf("request %d in the box: %d %q %s", i, r.StatusCode, r.Header.Get("Retry-After"), body)
		}
	}
	if got := counted.calls.Load() - before; got != 0 {
		t.Errorf("10 requests of a boxed client made %d store calls, want 0", got)
	}
}
