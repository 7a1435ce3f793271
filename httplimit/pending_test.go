package httplimit_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// A kept decision encoded on one instance is settled by another of the
// same limits on the shared store, as the decision API of a fleet needs;
// an instance whose limit of that name counts differently refuses it.
func TestPendingSettlesOnAnotherInstance(t *testing.T) {
	clock := clockAt(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	store := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { store.Close() })
	options := func(window time.Duration) httplimit.Options {
		return httplimit.Options{
			Plans: []*httplimit.Plan{{Name: "p", Limits: []sluice.Limit{
				sluice.FixedWindow(100, window).Named("tokens"),
				sluice.GCRA(1000, time.Second).Named("rate"),
			}, Costs: map[string]int64{"POST /v1/complete": 40}}},
			Count:  map[string]string{"tokens": httplimit.CountHeader + "X-Usage-Tokens"},
			Clock:  clock.Now,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		}
	}
	instance := func(o httplimit.Options) *httplimit.Middleware {
		mw, err := httplimit.New(sluice.NewLimiter(store), o)
		if err != nil {
			t.Fatal(err)
		}
		return mw
	}
	a, b := instance(options(time.Minute)), instance(options(time.Minute))
	ctx := context.Background()
	who := httplimit.Requester{Subject: "batch-7"}
	res, err := a.DecideFor(ctx, who, "POST", "/v1/complete", -1)
	if err != nil || !res.Decision.Allowed {
		t.Fatalf("%v %+v", err, res)
	}
	encoded, err := a.Keep(res).MarshalBinary()
	a.Discard(res)
	if err != nil {
		t.Fatal(err)
	}
	if other, err := instance(options(time.Hour)).UnmarshalPending(encoded); err == nil || other != nil ||
		!strings.Contains(err.Error(), `limit "tokens" is not counted by the answer here`) {
		t.Errorf("an instance whose tokens limit counts per hour: %v", err)
	}
	if _, err := b.UnmarshalPending([]byte(`{"s":"x","c":[]}`)); err == nil {
		t.Error("a settlement of no checks: accepted")
	}
	p, err := b.UnmarshalPending(encoded)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Settle(ctx, 200, http.Header{"X-Usage-Tokens": {"10"}}); err != nil {
		t.Fatal(err)
	}
	peek, err := a.DecideFor(ctx, who, "POST", "/v1/complete", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Discard(peek)
	if got := peek.Decision.Statuses[0].Remaining; peek.Checks[0].Limit.Name() != "tokens" || got != 90 {
		t.Errorf("after a settlement elsewhere of 10 tokens used of 40 reserved: %s has %d left, want 90", peek.Checks[0].Limit.Name(), got)
	}
}
