package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// A sliding log or lease book emptied by Refund or Release is a key never
// seen, as in Redis (which deletes the emptied hash): Reset finds nothing
// to forget, and the store counts no key for it.
func TestEmptiedLogIsForgotten(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		limit sluice.Limit
		give  func(s *memory.Store, c []sluice.Check, st sluice.Status) error
	}{
		{"released lease", sluice.Concurrency(2, time.Minute).Named("conc"), func(s *memory.Store, c []sluice.Check, st sluice.Status) error {
			return s.Release(ctx, c, []int64{st.Lease})
		}},
		{"refunded log entry", sluice.SlidingLog(2, time.Hour).Named("log"), func(s *memory.Store, c []sluice.Check, st sluice.Status) error {
			return s.Refund(ctx, c, []int64{st.Charged})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := memory.New(memory.WithSweepInterval(0))
			defer s.Close()
			checks := []sluice.Check{{Key: "k", Limit: tc.limit, Cost: 1}}
			out := make([]sluice.Status, 1)
			if err := s.Apply(ctx, checks, out); err != nil || !out[0].Allowed {
				t.Fatalf("first: %+v %v", out[0], err)
			}
			if err := tc.give(s, checks, out[0]); err != nil {
				t.Fatal(err)
			}
			if n := s.Stats().Keys; n != 0 {
				t.Errorf("store holds %d keys after the only entry went back, want 0", n)
			}
			if n := s.Reset("k", []sluice.Limit{tc.limit}); n != 0 {
				t.Errorf("Reset forgot %d states, want 0 (Redis deletes an emptied log)", n)
			}
			if err := s.Apply(ctx, checks, out); err != nil || !out[0].Allowed || out[0].Remaining != 1 {
				t.Errorf("after: %+v %v, want admitted with 1 left", out[0], err)
			}
		})
	}
}
