package server_test

import (
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// TestNotifyTellsNoShareOfACheckRefusedForWantOfRoom: the in-process
// store is full (store.max_keys) of clients its per-minute limit refuses,
// so a new client's first request is refused for want of room, nothing
// counted or charged (sluice.Status.NoRoom): the store's capacity is
// short, not the client's quota. Its Remaining 0 is no share used, and
// nothing is told of key k1, which has used none of its minute (told
// then, its 50% and 100% would also take the ids of the real crossings
// later in the minute).
func TestNotifyTellsNoShareOfACheckRefusedForWantOfRoom(t *testing.T) {
	hook := &hookReceiver{}
	hs := httptest.NewServer(hook)
	defer hs.Close()
	f := newFixtureWith(t, notifyConfig(t, hs.URL, "s"), func(o *server.Options) {
		m := memory.New(memory.WithClock(o.Clock), memory.WithSweepInterval(0), memory.WithShards(1), memory.WithMaxKeys(2))
		t.Cleanup(func() { m.Close() })
		o.Store, o.Memory = m, m
	})
	for _, ip := range []string{"203.0.113.1", "203.0.113.2"} { // each uses its whole minute
		for range 3 {
			if r := f.do(t, "GET", "/api/search", "", map[string]string{"X-Forwarded-For": ip}); r.StatusCode != 200 {
				t.Fatalf("%s: %d", ip, r.StatusCode)
			}
		}
	}
	hook.waitFor(t, 4) // their 50% and 100%
	if r := f.do(t, "GET", "/api/search", "", map[string]string{"X-API-Key": "demo-free-key"}); r.StatusCode != 429 {
		t.Fatalf("the new client's request: %d, want 429 for want of room", r.StatusCode)
	}
	time.Sleep(300 * time.Millisecond) // for a notification, if one were queued
	bodies, _ := hook.waitFor(t, 4)
	for _, b := range bodies {
		var n server.Notification
		if err := json.Unmarshal([]byte(b), &n); err != nil {
			t.Fatal(err)
		}
		if n.Key == "k1" {
			t.Errorf("told that k1, which has used none of its minute, used %d%%: %s", n.At, b)
		}
	}
}
