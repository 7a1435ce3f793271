package envoy_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/envoy"
)

// ctxStore fails a call whose caller has left with its context's error,
// as the Redis store does.
type ctxStore struct{}

func (ctxStore) Apply(ctx context.Context, _ []sluice.Check, _ []sluice.Status) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return errors.New("ctxStore decides nothing")
}

// An observer can tell why a request was not decided: the error it is
// told is the status Envoy gets, and wraps its cause — the context's
// error when the caller left (not the store's failure: metrics of store
// failures must not count Envoy's timeouts), the store's otherwise.
func TestObserversAreToldWhyARequestWasNotDecided(t *testing.T) {
	rules, err := envoy.LoadRules("rules.yaml", []byte(apiRules))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		store sluice.Store
		ctx   func() (context.Context, context.CancelFunc)
		code  codes.Code
		cause error
	}{
		{"the caller cancelled", ctxStore{}, func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel
		}, codes.Canceled, context.Canceled},
		{"the caller's deadline passed", ctxStore{}, func() (context.Context, context.CancelFunc) {
			return context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		}, codes.DeadlineExceeded, context.DeadlineExceeded},
		{"the store failed", failingStore{}, func() (context.Context, context.CancelFunc) {
			return context.WithCancel(context.Background())
		}, codes.Unavailable, sluice.ErrStoreUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var observed error
			svc, err := envoy.NewService(sluice.NewLimiter(tc.store), rules,
				envoy.Options{Observer: func(_ *envoy.Result, _ time.Duration, err error) { observed = err }})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := tc.ctx()
			defer cancel()
			_, err = svc.ShouldRateLimit(ctx, request("api", 0, desc("client", "c")))
			if grpcstatus.Code(err) != tc.code {
				t.Errorf("answered %v, want %v", err, tc.code)
			}
			if grpcstatus.Code(observed) != tc.code || !errors.Is(observed, tc.cause) {
				t.Errorf("observer told %v, want %v wrapping %v", observed, tc.code, tc.cause)
			}
		})
	}
}
