package client

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// sendFrom sends up to n requests of cost 1, one at a time, from start
// to srv through a fresh host's state, each decided 10 ms after its send
// and answered 10 ms later. It stops at the first wait longer than a
// minute (a Transport's MaxWait) and returns how many went, when the last
// answer came and how many srv refused.
func sendFrom(srv *multiServer, start time.Time, n int) (sent int, last time.Time, refused int) {
	return sendWith(newHostState(true, 0), srv, start, n)
}

// sendWith is sendFrom through h.
func sendWith(h *hostState, srv *multiServer, start time.Time, n int) (sent int, last time.Time, refused int) {
	now := start
	for sent < n {
		tk, ok, wake := h.try(1, now)
		if !ok {
			if wake.IsZero() || wake.Sub(now) > time.Minute {
				break
			}
			now = wake
			continue
		}
		sent++
		status, hdr := srv.decide(now.Add(10 * time.Millisecond))
		if status != http.StatusOK {
			refused++
		}
		now = now.Add(20 * time.Millisecond)
		r := readResponse(hdr, now)
		r.status = status
		h.finish(tk, r)
	}
	return sent, now, refused
}

// A batch that starts 30 s before a per-day fixed window ends, spends it,
// and meets its reset: an answer then says its 19 units were counted
// with nothing else (19 left of 20 when the client had sent 1, 1 left
// when it had sent 19), and that more comes back 21 s later, which a
// sliding log of a day holding only the client's units would not say
// (its oldest unit would leave a day after it came). So the count is
// released whole at the reset, and after it the client keeps to what it
// sent since: the day's next 20 go at 2 a second. Before, the client held
// its units in the policy's window for a day after their answers, the
// wait past the reset a fixed window never needs (ErrWaitTooLong for a
// Transport). A sliding log of a day is still kept to 20 units a day, and
// a bucket whose reset is when its next unit comes back (which the same
// answers cannot tell from a fixed window; here one that states a day and
// fills in 10 minutes) meets one refusal more, after which its units are
// kept in the window.
func TestAFixedWindowsResetReleasesTheUnitsCountedBeforeIt(t *testing.T) {
	day := 24 * time.Hour
	start := t0.Add(day - 30*time.Second)
	for _, perDay := range []exactPolicy{
		{name: "per-day", q: 20, w: day},
		{name: "per-day", q: 20, w: day, log: true},
		{name: "per-day", q: 20, w: day, bucket: true, nextUnit: true, fill: 10 * time.Minute},
	} {
		srv := &multiServer{policies: []*exactPolicy{{name: "per-second", q: 2, w: time.Second}, &perDay}}
		sent, last, refused := sendFrom(srv, start, 60)
		what := fmt.Sprintf("per-day (sliding log %v, bucket %v): %d requests went by %v after the start, %d refused (%v)",
			perDay.log, perDay.bucket, sent, last.Sub(start), refused, srv.refusal)
		t.Log(what)
		switch {
		case perDay.bucket && refused > 2:
			t.Errorf("%s; want at most 2 refused (the per-second rate tried, a release)", what)
		case !perDay.bucket && refused > 1:
			t.Errorf("%s; want at most 1 refused (the per-second rate tried)", what)
		case !perDay.log && !perDay.bucket && sent < 40:
			t.Errorf("%s; want at least 40, 20 after the day's reset", what)
		case perDay.log && sent-refused > 20:
			t.Errorf("%s; want at most 20 admitted in a day", what)
		}
	}
}

// A host that has sent for longer than the policy's w proves its count
// released by requests sent alone: the client's units admitted since a
// send alone after the reset less w, all answered before the request,
// make up all the server counted, so no sliding log held an older one.
func TestALongUsedHostsFixedWindowIsReleasedAtItsReset(t *testing.T) {
	day := 24 * time.Hour
	start := t0.Add(2*day - 30*time.Second)
	for _, log := range []bool{false, true} {
		srv := &multiServer{policies: []*exactPolicy{
			{name: "per-second", q: 2, w: time.Second},
			{name: "per-day", q: 20, w: day, log: log},
		}}
		h := newHostState(true, 0)
		if sent, _, _ := sendWith(h, srv, t0.Add(time.Hour), 1); sent != 1 {
			t.Fatal("the request of the day before was not sent")
		}
		sent, last, refused := sendWith(h, srv, start, 60)
		what := fmt.Sprintf("per-day sliding log %v, the host's first request a day before: %d requests went by %v after the start, %d refused (%v)",
			log, sent, last.Sub(start), refused, srv.refusal)
		t.Log(what)
		switch {
		case refused > 1:
			t.Errorf("%s; want at most 1 refused (the per-second rate tried)", what)
		case !log && sent < 40:
			t.Errorf("%s; want at least 40, 20 after the day's reset", what)
		case log && sent-refused > 20:
			t.Errorf("%s; want at most 20 admitted in a day", what)
		}
	}
}
