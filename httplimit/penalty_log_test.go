package httplimit_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/memory"
)

// An instance logs "client boxed" when its call put the client in the box,
// not when the call found the client boxed already: here boxed by an
// operator through another instance, while this one, with StoreLeases,
// still decides the client without the box's guard for up to a second.
func TestOnlyTheCallThatBoxesLogsTheBox(t *testing.T) {
	clock := clockAt(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	store := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { store.Close() })
	var logs [2]realtest.Buffer
	var mws [2]*httplimit.Middleware
	for i := range mws {
		o := boxedAfterOneRefusal
		o.StoreLeases = true
		o.Clock, o.Scope = clock.Now, "api"
		o.Logger = slog.New(slog.NewTextHandler(&logs[i], nil))
		mw, err := httplimit.New(sluice.NewLimiter(store), o)
		if err != nil {
			t.Fatal(err)
		}
		mws[i] = mw
	}
	a := req{remote: "192.0.2.1:1"}
	if got := statuses(mws[1], a); got[0] != 200 {
		t.Fatalf("a's first request: %d, want 200", got[0])
	}
	if _, err := mws[0].Penalize(context.Background(), "ip:192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	clock.Advance(10 * time.Millisecond)
	if got := statuses(mws[1], a); got[0] != 429 {
		t.Fatalf("a's second request: %d, want 429", got[0])
	}
	if n := strings.Count(logs[1].String(), "penalty box: client boxed"); n != 0 {
		t.Errorf("the instance that found a boxed already logged %d boxings:\n%s", n, logs[1].String())
	}
	// Its own boxing is logged: b refused on instance 1, boxed there.
	b := req{remote: "192.0.2.2:1"}
	if got := statuses(mws[1], b, b); got[0] != 200 || got[1] != 429 {
		t.Fatalf("b ×2: %v, want [200 429]", got)
	}
	if n := strings.Count(logs[1].String(), "penalty box: client boxed"); n != 1 {
		t.Errorf("b boxed by instance 1: %d boxings logged, want 1:\n%s", n, logs[1].String())
	}
}
