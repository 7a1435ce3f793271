package httplimit_test

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// TestARefusalForWantOfRoomStatesNoUseOfTheQuota: a memory store full
// (max_keys) of a client its hourly limit refuses refuses a new client's
// first request for want of room (sluice.Status.NoRoom): nothing was
// counted, and its Remaining (0) and ResetAfter are no measure of the
// client's use. As for a status no store decided (Unavailable), the
// RateLimit header has no item for the limit and the problem body no
// currentUsage, rather than tell a client that used nothing that its hour's
// quota is spent; the 429 keeps Retry-After (when room may be found) and
// RateLimit-Policy.
func TestARefusalForWantOfRoomStatesNoUseOfTheQuota(t *testing.T) {
	clock := clockAt(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	store := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0), memory.WithShards(1), memory.WithMaxKeys(1))
	t.Cleanup(func() { store.Close() })
	for _, mode := range []string{httplimit.ModeIETF, httplimit.ModeDraft7} {
		mw, err := httplimit.New(sluice.NewLimiter(store), httplimit.Options{
			Plans:   []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(1, time.Hour).Named("per-hour")}}},
			Headers: []string{mode},
			Clock:   clock.Now,
			Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
		})
		if err != nil {
			t.Fatal(err)
		}
		h := mw.Handler(okHandler())
		do(h, req{remote: "192.0.2.1:1"}) // its hour used: its state refuses, and is kept
		before := store.Stats().NoRoom
		w := do(h, req{remote: "192.0.2.2:1"}) // a new client's first request: no room
		if w.Code != 429 || store.Stats().NoRoom == before {
			t.Fatalf("%s: a new client's first request: %d, want 429 for want of room (%+v)", mode, w.Code, store.Stats())
		}
		if got := w.Header().Get("Ratelimit"); got != "" {
			t.Errorf("%s: RateLimit: %s, want no item for a limit that counted nothing", mode, got)
		}
		if w.Header().Get("Ratelimit-Policy") == "" || w.Header().Get("Retry-After") == "" {
			t.Errorf("%s: RateLimit-Policy %q, Retry-After %q: want both", mode, w.Header().Get("Ratelimit-Policy"), w.Header().Get("Retry-After"))
		}
		if p := decodeProblem(t, w.Body.String()); p.CurrentUsage != nil {
			t.Errorf("%s: a client that used nothing is told currentUsage %+v: %s", mode, *p.CurrentUsage, w.Body.String())
		}
	}
}
