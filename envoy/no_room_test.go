package envoy_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/memory"
)

// roomless is a memory store whose room, while full is set, runs out for
// the descriptor value "new": a call that would keep a state of that
// value's limit is refused as a memory store under memory.WithMaxKeys
// refuses it, for want of room, nothing counted (sluice.Status.NoRoom);
// the value's over-limit record (":over") falls in another shard, which
// has room.
type roomless struct {
	*memory.Store
	full atomic.Bool
}

func (s *roomless) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	keep := false
	for _, c := range checks {
		keep = keep || c.Cost > 0 && strings.HasSuffix(c.Key, "=new")
	}
	if !s.full.Load() || !keep {
		return s.Store.Apply(ctx, checks, out)
	}
	for i, c := range checks {
		if c.Cost > 0 && strings.HasSuffix(c.Key, "=new") {
			out[i] = sluice.Status{ResetAfter: 30 * time.Second, RetryAfter: 30 * time.Second, NoRoom: true}
		} else {
			out[i] = sluice.Status{Allowed: true}
		}
	}
	return nil
}

// serveRoomless serves rulesYAML on a roomless store at start, with the
// outcomes of the last request kept in *got.
func serveRoomless(t *testing.T, rulesYAML string, got *[]envoy.Outcome) (*envoy.Service, *roomless) {
	t.Helper()
	rules, err := envoy.LoadRules("rules.yaml", []byte(rulesYAML))
	if err != nil {
		t.Fatal(err)
	}
	now := func() time.Time { return start }
	store := &roomless{Store: memory.New(memory.WithClock(now), memory.WithSweepInterval(0))}
	t.Cleanup(func() { store.Close() })
	svc, err := envoy.NewService(sluice.NewLimiter(store), rules, envoy.Options{Clock: now,
		Observer: func(res *envoy.Result, _ time.Duration, _ error) { *got = append((*got)[:0], res.Descriptors...) }})
	if err != nil {
		t.Fatal(err)
	}
	return svc, store
}

// An Outcome carries its status's NoRoom: an observer can tell a
// descriptor the store refused for want of room, whose Remaining (0)
// tells no use of its limit, from one its limit refused.
func TestOutcomesTellARefusalForWantOfRoom(t *testing.T) {
	var got []envoy.Outcome
	svc, store := serveRoomless(t, apiRules, &got)
	store.full.Store(true)
	for _, tc := range []struct {
		value         string
		result        string
		noRoom        bool
		stillToRefuse int
	}{
		{"new", "limited", true, 0},
		{"old", "allowed", false, 0},
	} {
		if _, err := svc.ShouldRateLimit(context.Background(), request("api", 0, desc("client", tc.value))); err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Result != tc.result || got[0].NoRoom != tc.noRoom {
			t.Errorf("client %s: observed %+v, want one outcome %s with NoRoom %v", tc.value, got, tc.result, tc.noRoom)
		}
	}
}

// A request refused for want of room counted nothing, so its window did
// not go over: settle marks no over-limit record for it. Once room is
// found, the client fills its window of 5 (full, not over, as
// envoyproxy/ratelimit counts it), and a peek at it (hits_addend 0) is
// OK; had the refusal marked the window over, the peek would find a full
// window with its record spent and answer OVER_LIMIT.
func TestARefusalForWantOfRoomMarksNoWindowOver(t *testing.T) {
	var got []envoy.Outcome
	svc, store := serveRoomless(t, apiRules, &got)
	ask := func(hits uint64) bool {
		t.Helper()
		resp, err := svc.ShouldRateLimit(context.Background(), request("api", 0, withHits(desc("client", "new"), hits)))
		if err != nil {
			t.Fatal(err)
		}
		return resp.OverallCode == ok
	}
	store.full.Store(true)
	if ask(1) {
		t.Fatal("admitted while the store has no room")
	}
	store.full.Store(false)
	if !ask(5) {
		t.Fatal("5 hits refused in a window of 5 with room found")
	}
	if !ask(0) {
		t.Errorf("a peek at a full window refused: the refusal for want of room marked it over")
	}
}
