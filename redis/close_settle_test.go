package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/redis"
)

// Close charges Redis with what the instance admitted locally while Redis
// was down and has not charged yet: a restart after an outage would
// otherwise forget it, and the fleet admit those units again.
func TestCloseChargesWhatTheOutageAdmitted(t *testing.T) {
	srv := redistest.Standalone(t)
	srv.Kill()
	local := memory.New(memory.WithSweepInterval(0))
	defer local.Close()
	st, err := redis.Open(context.Background(), redis.Options{Addrs: []string{srv.Addr}, Local: local, Timeout: testTimeout})
	if err != nil {
		t.Fatal(err)
	}
	lim := sluice.NewLimiter(st)
	limit := sluice.FixedWindow(10, 24*time.Hour).Named("daily")
	for range 4 {
		if d, err := allow(lim, context.Background(), sluice.Check{Key: "k", Limit: limit, Cost: 1}); err != nil || !d.Allowed {
			t.Fatalf("during the outage: %+v, %v", d, err)
		}
	}
	srv.Restart()
	if err := st.Ping(context.Background()); err != nil {
		for start := time.Now(); err != nil && time.Since(start) < 10*time.Second; time.Sleep(20 * time.Millisecond) {
			err = st.Ping(context.Background())
		}
		if err != nil {
			t.Fatalf("Redis back: %v", err)
		}
	}
	st.Close()

	fresh, err := redis.Open(context.Background(), redis.Options{Addrs: []string{srv.Addr}, Timeout: testTimeout})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	d, err := allow(sluice.NewLimiter(fresh), context.Background(), sluice.Check{Key: "k", Limit: limit, Cost: 0})
	if err != nil || d.Remaining != 6 {
		t.Errorf("Redis after Close: remaining %d (%v), want 6: the 4 admitted during the outage charged", d.Remaining, err)
	}
}
