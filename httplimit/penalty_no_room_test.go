package httplimit_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// penaltyRig serves a middleware of one plan, 1 per minute, with a
// penalty box of refusals per minute, on store; serve sends a request from
// addr and returns its status and problem type.
func penaltyRig(t *testing.T, store sluice.Store, refusals int64) func(addr string) (int, string) {
	t.Helper()
	mw, err := httplimit.New(sluice.NewLimiter(store), httplimit.Options{
		Plans:   []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.PerMinute(1).Named("per-minute")}}},
		Penalty: httplimit.Penalty{Refusals: refusals, Within: time.Minute, For: 10 * time.Minute},
		Clock:   func() time.Time { return noonNoRoom },
	})
	if err != nil {
		t.Fatal(err)
	}
	h := mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	return func(addr string) (int, string) {
		rec := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodGet, "/v1/items", nil)
		r.RemoteAddr = addr
		h.ServeHTTP(rec, r)
		var p httplimit.Problem
		if rec.Code != http.StatusOK {
			if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
				t.Fatalf("%d %s: %v", rec.Code, rec.Body, err)
			}
		}
		return rec.Code, p.Type
	}
}

var noonNoRoom = time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)

// A store full of clients being refused refuses a newcomer's first
// request for want of room, the box's guard included (it is a state of
// the client's too): the guard found no room, not a box, so the newcomer
// is neither answered as boxed (ProblemPenalty) nor remembered boxed.
func TestAGuardRefusedForWantOfRoomIsNoBox(t *testing.T) {
	mem := memory.New(memory.WithClock(func() time.Time { return noonNoRoom }), memory.WithSweepInterval(0),
		memory.WithShards(1), memory.WithMaxKeys(2))
	t.Cleanup(func() { mem.Close() })
	serve := penaltyRig(t, mem, 1)
	if code, typ := serve("203.0.113.1:1"); code != http.StatusOK {
		t.Fatalf("the first client: %d %s", code, typ)
	}
	code, typ := serve("203.0.113.2:1")
	if code != http.StatusTooManyRequests || typ == httplimit.ProblemPenalty {
		t.Errorf("the newcomer refused for want of room: %d %s; want 429, no penalty box", code, typ)
	}
	if code, typ := serve("203.0.113.2:1"); code != http.StatusTooManyRequests || typ == httplimit.ProblemPenalty {
		t.Errorf("the newcomer's next request: %d %s; want 429 for want of room, not remembered boxed", code, typ)
	}
}

// roomFor is a store that has no room, while full is set, for the states
// of the limit named name: a call that charges it is refused as a memory
// store under memory.WithMaxKeys refuses it, nothing counted, that check
// refused for want of room (sluice.Status.NoRoom); next decides the others.
type roomFor struct {
	sluice.Store
	name string
	full atomic.Bool
}

func (s *roomFor) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	refuse := false
	for _, c := range checks {
		refuse = refuse || c.Cost > 0 && c.Limit.Name() == s.name
	}
	if !s.full.Load() || !refuse {
		return s.Store.Apply(ctx, checks, out)
	}
	for i, c := range checks {
		out[i] = sluice.Status{Allowed: true}
		if c.Cost > 0 && c.Limit.Name() == s.name {
			out[i] = sluice.Status{ResetAfter: time.Second, RetryAfter: time.Second, NoRoom: true}
		}
	}
	return nil
}

// A refusal that counted nothing for want of room counts toward no box:
// neither a request refused because its limit's state found no room (with
// Refusals 1, the first refusal of the client's own would box it), nor a
// refusal of the client's own whose count (penalty-refusals) found none,
// which is not the Refusals-th (3) for that. The client's next request is
// refused by its limit, not by the box.
func TestARefusalWithoutRoomCountsTowardNoBox(t *testing.T) {
	for _, tc := range []struct {
		name     string
		roomless string // the limit whose states find no room
		refusals int64
	}{
		{"its limit found no room", "per-minute", 1},
		{"its count found no room", "penalty-refusals", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.New(memory.WithClock(func() time.Time { return noonNoRoom }), memory.WithSweepInterval(0))
			t.Cleanup(func() { mem.Close() })
			store := &roomFor{Store: mem, name: tc.roomless}
			serve := penaltyRig(t, store, tc.refusals)
			if tc.roomless == "penalty-refusals" {
				serve("203.0.113.1:1") // the minute used: the next request is the client's first refusal
			}
			store.full.Store(true)
			if code, typ := serve("203.0.113.1:1"); code != http.StatusTooManyRequests || typ == httplimit.ProblemPenalty {
				t.Fatalf("the refusal: %d %s; want 429, no penalty box", code, typ)
			}
			store.full.Store(false)
			serve("203.0.113.1:1")
			if code, typ := serve("203.0.113.1:1"); code != http.StatusTooManyRequests || typ == httplimit.ProblemPenalty {
				t.Errorf("the next refusal: %d %s; want 429 by the client's limit, not the penalty box", code, typ)
			}
		})
	}
}
