package server_test

import (
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

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
