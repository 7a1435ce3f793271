package client

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"pgregory.net/rapid"
)

func TestAPolicyStatedWithoutRemainingLimitsWhatIsSentInItsWindow(t *testing.T) {
	h := newHostState(true, 0)
	hdr := http.Header{}
	hdr.Set("RateLimit-Policy", `"per-minute";q=3;w=60`)
	h.finish(mustGrant(t, h, t0, "probe"), readResponse(hdr, t0))
	mustGrant(t, h, t0.Add(time.Second), "second of 3 a minute")
	mustGrant(t, h, t0.Add(2*time.Second), "third of 3 a minute")
	_, ok, wake := h.try(1, t0.Add(3*time.Second))
	if ok {
		t.Fatal("a fourth request went within the minute, past the 3 a minute the policy states")
	}
	// The first went at t0: its unit leaves the window a minute later, up
	// to a 64th of the window late.
	if wake.Before(t0.Add(time.Minute)) || wake.After(t0.Add(time.Minute+time.Minute/64+time.Millisecond)) {
		t.Fatalf("wake %v; want a minute after the first, a 64th of it late at most", wake)
	}
	mustGrant(t, h, wake, "a fourth when the first has left the window")
	if _, ok, _ := h.try(1, wake); ok {
		t.Error("a fifth went with the fourth, 4 within the minute")
	}
}

func TestAPolicyOfContentBytesStatedAloneCountsTheBodies(t *testing.T) {
	h := newHostStateCountingBytes(true, 0)
	hdr := http.Header{}
	hdr.Set("RateLimit-Policy", `"upload";q=1000;w=60;qu="content-bytes"`)
	tk, ok, _ := h.tryWith(1, 600, t0)
	if !ok {
		t.Fatal("the first upload was not granted")
	}
	h.finish(tk, readResponse(hdr, t0))
	if _, ok, _ := h.tryWith(1, 600, t0.Add(time.Second)); ok {
		t.Error("a second upload of 600 bytes went within the minute of the first, 1,200 of 1,000 a minute")
	}
	if _, ok, _ := h.tryWith(1, 0, t0.Add(time.Second)); !ok {
		t.Error("a request without content waits for the quota of content bytes")
	}
	// A body of unknown length may fill the quota: it waits for an empty
	// window.
	if _, ok, _ := h.tryWith(1, -1, t0.Add(time.Second)); ok {
		t.Error("a body of unknown length went with 600 bytes of 1,000 sent in the minute")
	}
	if _, ok, _ := h.tryWith(1, 400, t0.Add(time.Second)); !ok {
		t.Error("an upload of 400 bytes, within the 1,000 a minute, waits")
	}
	h.mu.Lock()
	err := h.tooLarge(5000, "api.example")
	h.mu.Unlock()
	if !errors.Is(err, ErrExceedsBurst) {
		t.Errorf("a body of 5,000 bytes against 1,000 a minute: %v; want ErrExceedsBurst", err)
	}
}

// Whatever the sends' times and costs, those a window admits never put
// more than q units in any span of w, and a send it holds is admitted at
// the wake it gives.
func TestAWindowNeverAdmitsMoreThanQInAnySpanOfW(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		q := rapid.Int64Range(1, 20).Draw(t, "q")
		wd := time.Duration(rapid.Int64Range(1, 5000).Draw(t, "w ms")) * time.Millisecond
		w := newWindow(statedPolicy{name: "p", q: q, w: wd}, t0)
		type sent struct {
			at   time.Time
			cost int64
		}
		var log []sent
		now := t0
		for range rapid.IntRange(1, 60).Draw(t, "sends") {
			now = now.Add(time.Duration(rapid.Int64Range(0, int64(wd/4)).Draw(t, "gap")))
			cost := rapid.Int64Range(0, q).Draw(t, "cost")
			ok, wake := w.admits(cost, 0, now)
			if !ok {
				if !wake.After(now) {
					t.Fatalf("held at %v until %v", now, wake)
				}
				if ok, _ := w.admits(cost, 0, wake); !ok {
					t.Fatalf("held at %v until %v, and held then", now, wake)
				}
				if rapid.Bool().Draw(t, "wait") {
					now = wake
				} else {
					continue
				}
			}
			w.add(cost, now)
			log = append(log, sent{now, cost})
			var in int64
			for _, s := range log {
				if now.Sub(s.at) < wd {
					in += s.cost
				}
			}
			if in > q {
				t.Fatalf("%d units within %v of %v; q is %d", in, wd, now, q)
			}
		}
	})
}

// A server counts a request when it decides it, at any time from its send
// to its answer: a unit stays in a policy's window until w after its
// answer, however long the request took, or a sliding window that counted
// it late would refuse the next.
func TestAUnitStaysInAPolicysWindowUntilWAfterItsAnswer(t *testing.T) {
	h := newHostState(true, 0)
	hdr := http.Header{}
	hdr.Set("RateLimit-Policy", `"per-10s";q=1;w=10`)
	h.finish(mustGrant(t, h, t0, "probe"), readResponse(hdr, t0))
	_, _, wake := h.try(1, t0)
	slow := mustGrant(t, h, wake, "the next, when the probe has left the window")
	// The server decides it 4.9 s later: a sliding log holds it until
	// 10 s after that.
	answered := wake.Add(5 * time.Second)
	h.finish(slow, readResponse(hdr, answered))
	if _, ok, next := h.try(1, wake.Add(10*time.Second+time.Second)); ok || next.Before(answered.Add(10*time.Second)) {
		t.Errorf("the third: granted %v, wake %v; want a wait until 10 s after the second's answer, %v", ok, next, answered.Add(10*time.Second))
	}
}
