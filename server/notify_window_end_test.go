package server_test

import (
	"encoding/json"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
	"github.com/sluice-dev/sluice/server"
)

// TestNotifyResetsAtIsTheWindowsEnd: a notification's resetsAt is the end
// of the window that counted the crossing, the minute's 12:01:00, even
// though the server reads its clock a moment before the store decides (as
// a server does: it reads the time, then asks the store, which reads its
// own) — never the second before the end.
func TestNotifyResetsAtIsTheWindowsEnd(t *testing.T) {
	hook := &hookReceiver{}
	srv := httptest.NewServer(hook)
	defer srv.Close()
	f := newFixtureWith(t, notifyConfig(t, srv.URL, "s"), func(o *server.Options) {
		storeNow := o.Clock
		o.Clock = func() time.Time { return storeNow().Add(-time.Millisecond) }
	})
	key := map[string]string{"X-API-Key": "demo-free-key"}
	for range 2 { // crosses 50%
		f.do(t, "GET", "/api/search", "", key)
	}
	bodies, _ := hook.waitFor(t, 1)
	var n server.Notification
	if err := json.Unmarshal([]byte(bodies[0]), &n); err != nil {
		t.Fatal(err)
	}
	if n.ResetsAt != "2026-11-30T12:01:00Z" {
		t.Errorf("resetsAt %q, want the minute's end 2026-11-30T12:01:00Z", n.ResetsAt)
	}
}

// TestNotifyIDIsTheFleetsWhateverEachHostsClock: two instances share one
// Redis, which decides on its own clock (redis.WithTimeForTesting stands
// in for Redis's TIME); instance B's host clock is 600 ms ahead of it,
// A's exact. The client uses one unit through A, one through B (which
// tells 50% of 3) and one through A (which tells 50%, not having seen it,
// and 100%). Both name the window Redis counted in, the minute ending
// 12:01:00, not their clock plus Redis's ResetAfter: B's 50% carries A's
// id and resetsAt, so a receiver that drops repeats by id hears it once.
func TestNotifyIDIsTheFleetsWhateverEachHostsClock(t *testing.T) {
	hook := &hookReceiver{}
	hs := httptest.NewServer(hook)
	defer hs.Close()
	cfg := notifyConfig(t, hs.URL, "s")
	rs := redistest.Standalone(t)
	redisClock := &fakeClock{}
	redisClock.us.Store(sluice.MicrosSinceEpoch(noon))
	instance := func(skew time.Duration) *fixture {
		return newFixtureWith(t, cfg, func(o *server.Options) {
			o.Store = redis.New(rs.Client(t), redis.WithTimeout(fixtureTimeout), redis.WithTimeForTesting(redisClock.Now))
			o.Clock = func() time.Time { return redisClock.Now().Add(skew) }
		})
	}
	a, b := instance(0), instance(600*time.Millisecond)
	key := map[string]string{"X-API-Key": "demo-free-key"}
	for i, f := range []*fixture{a, b, a} {
		if r := f.do(t, "GET", "/api/search", "", key); r.StatusCode != 200 {
			t.Fatalf("request %d: %d", i, r.StatusCode)
		}
	}
	bodies, _ := hook.waitFor(t, 3)
	var fromA, fromB server.Notification
	for _, body := range bodies[:3] {
		var n server.Notification
		if err := json.Unmarshal([]byte(body), &n); err != nil {
			t.Fatal(err)
		}
		switch {
		case n.At != 50:
		case n.Used == 2: // told by B, at the second request
			fromB = n
		default:
			fromA = n
		}
	}
	if fromA.ID == "" || fromB.ID == "" {
		t.Fatalf("want 50%% told by both instances, got %q", bodies)
	}
	if fromA.ID != fromB.ID || fromB.ResetsAt != "2026-11-30T12:01:00Z" {
		t.Errorf("50%% of the minute ending 12:01:00 told as A %s (resetsAt %s) and B %s (resetsAt %s), want one id and that end",
			fromA.ID, fromA.ResetsAt, fromB.ID, fromB.ResetsAt)
	}
}

// TestNotifyTellsAShareOnceAfterTheHostsClockSteps: the in-process store's
// clock never steps (memory.WithClock), while the server reads the host's
// wall clock for the decision's time. The wall clock steps 1 s forward
// (NTP at boot, a resumed VM) after the client's 50% was told: the store's
// minute is the same, and the next decision tells 100% of it, not 50%
// again under another id.
func TestNotifyTellsAShareOnceAfterTheHostsClockSteps(t *testing.T) {
	hook := &hookReceiver{}
	hs := httptest.NewServer(hook)
	defer hs.Close()
	var step atomic.Int64
	f := newFixtureWith(t, notifyConfig(t, hs.URL, "s"), func(o *server.Options) {
		storeNow := o.Clock // the memory store's clock
		o.Clock = func() time.Time { return storeNow().Add(time.Duration(step.Load())) }
	})
	key := map[string]string{"X-API-Key": "demo-free-key"}
	for range 2 { // 50%
		readAll(t, f.do(t, "GET", "/api/search", "", key))
	}
	hook.waitFor(t, 1)
	step.Store(int64(time.Second))
	readAll(t, f.do(t, "GET", "/api/search", "", key)) // 100%
	hook.waitFor(t, 2)
	time.Sleep(200 * time.Millisecond) // for a repeat, if one were queued
	bodies, _ := hook.waitFor(t, 2)
	var at []int
	for _, b := range bodies {
		var n server.Notification
		if err := json.Unmarshal([]byte(b), &n); err != nil {
			t.Fatal(err)
		}
		at = append(at, n.At)
	}
	if len(at) != 2 || at[0] != 50 || at[1] != 100 {
		t.Errorf("told %v of one minute's quota, want 50 and 100 once each:\n%s", at, bodies)
	}
}
