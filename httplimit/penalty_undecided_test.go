package httplimit_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/overlimit"
)

// With StoreLeases, a guarded call whose guard "found a client not in the
// box" sends the client's next requests without the guard for a second
// (Penalty, Options.StoreLeases). A refusal the over-limit cache repeats
// reports the guard sluice.Status.Undecided — no store looked at the box —
// which clears nothing: taken for "not in the box", it cleared the client
// for another second, and a box set through another instance reached this
// one more than a second after it was set, against "a box set on another
// instance then refuses the client here within a second of being set".
func TestAGuardTheCacheDidNotDecideDoesNotClearTheClient(t *testing.T) {
	clock := clockAt(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	shared := memory.New(memory.WithClock(clock.Now))
	o := httplimit.Options{
		Plans:       []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.SlidingLog(1, 1500*time.Millisecond)}}},
		Penalty:     httplimit.Penalty{Refusals: 1000, Within: time.Minute, For: 10 * time.Minute},
		StoreLeases: true,
		Clock:       clock.Now, Scope: "api",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	cache := overlimit.New(shared, overlimit.Options{Clock: clock.Now})
	here, err := httplimit.New(sluice.NewLimiter(cache), o) // this instance: the cache in front of the store
	if err != nil {
		t.Fatal(err)
	}
	elsewhere, err := httplimit.New(sluice.NewLimiter(shared), o) // another instance on the same store
	if err != nil {
		t.Fatal(err)
	}
	h := here.Handler(okHandler())
	a, subject := req{remote: "192.0.2.1:1"}, "ip:192.0.2.1"

	if w := do(h, a); w.Code != 200 { // guarded: the store says not boxed
		t.Fatalf("first request: %d", w.Code)
	}
	clock.Advance(500 * time.Millisecond)
	if w := do(h, a); w.Code != 429 { // unguarded, refused by its limit; the cache remembers it
		t.Fatalf("second request: %d", w.Code)
	}
	clock.Advance(50 * time.Millisecond)
	boxedAt := clock.Now()
	if _, err := elsewhere.Penalize(context.Background(), subject); err != nil {
		t.Fatal(err)
	}
	clock.Advance(650 * time.Millisecond) // the clearance has run out: the guard goes with the call
	saved := cache.Stats().RoundTripsSaved
	if w := do(h, a); w.Code != 429 {
		t.Fatalf("third request: %d", w.Code)
	}
	if cache.Stats().RoundTripsSaved == saved {
		t.Fatal("the third request was not refused by the cache: the scenario did not happen")
	}
	clock.Advance(700 * time.Millisecond) // the sliding log has room again
	w := do(h, a)
	if w.Code != 429 {
		t.Errorf("a request %v after the client was boxed elsewhere: %d %s, want the box's refusal (within a second of being set)",
			clock.Now().Sub(boxedAt), w.Code, w.Body.String())
	}
}
