package httplimit_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
)

// ctxStore decides nothing: it fails with its caller's context error, as
// a network store does for a caller that gave up, or with errDown.
type ctxStore struct{}

var errDown = fmt.Errorf("store down: %w", sluice.ErrStoreUnavailable)

func (ctxStore) Apply(ctx context.Context, _ []sluice.Check, _ []sluice.Status) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("caller gave up: %w", err)
	}
	return errDown
}

// A client that leaves before its decision is neither served nor taken
// for a store failure: the handler returns without calling next or the
// ErrorHandler and logs nothing; the Observer sees the context's error. A
// store failure of a client still there goes to the ErrorHandler as before.
func TestClientThatLeftBeforeItsDecisionIsNoFailure(t *testing.T) {
	cfg, err := config.Parse("t.yaml", []byte("plans: {p: {limits: [{name: per-minute, algorithm: fixed-window, quantity: 5, window: 1m}]}}\ndefault_plan: p\nanonymous_plan: p\n"))
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	var handled, served int
	var observed []error
	o := cfg.HTTPLimitOptions()
	o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	o.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) bool { handled++; return true }
	o.Observer = func(_ *httplimit.Result, _ time.Duration, err error) { observed = append(observed, err) }
	mw, err := httplimit.New(sluice.NewLimiter(ctxStore{}), o)
	if err != nil {
		t.Fatal(err)
	}
	h := mw.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served++ }))

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/x", nil).WithContext(ctx))
	if served != 0 || handled != 0 || logs.Len() != 0 {
		t.Errorf("a client that left: served %d, ErrorHandler called %d times, logged %q; want nothing", served, handled, logs.String())
	}
	if len(observed) != 1 || !errors.Is(observed[0], context.Canceled) {
		t.Errorf("observed %v, want one error the caller's leaving explains", observed)
	}

	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/x", nil))
	if served != 1 || handled != 1 || len(observed) != 2 || errors.Is(observed[1], context.Canceled) {
		t.Errorf("a store failure: served %d, ErrorHandler called %d times, observed %v; want 1, 1 and a store error", served, handled, observed)
	}
}
