package redis_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// A call the caller cancelled, with a cause (context.WithCancelCause) or
// without, is no failure of the store: its error wraps context.Canceled,
// not sluice.ErrStoreUnavailable (Store.Apply), batched or not — else a
// failure policy would decide a call nobody waits for.
func TestACallerCancellationWithACauseIsNotStoreUnavailable(t *testing.T) {
	srv := redistest.Standalone(t)
	c := sluice.Check{Key: "s48i-cause", Limit: sluice.FixedWindow(10, time.Hour), Cost: 1}
	for _, batching := range []int{0, redis.DefaultBatchRuns} {
		s, err := redis.Dial(redis.Options{Addrs: []string{srv.Addr}, Timeout: testTimeout}, redis.WithBatching(batching))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(errors.New("the client went away"))
		err = s.Apply(ctx, []sluice.Check{c}, make([]sluice.Status, 1))
		s.Close()
		if err == nil || errors.Is(err, sluice.ErrStoreUnavailable) || !errors.Is(err, context.Canceled) {
			t.Errorf("WithBatching(%d), the caller's context cancelled with a cause: %v; want an error wrapping context.Canceled, not sluice.ErrStoreUnavailable",
				batching, err)
		}
	}
}
