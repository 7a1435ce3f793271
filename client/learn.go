package client

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// What a Transport knows about one host's quota.
//
// The RateLimit headers say how many units remained right after the server
// decided a request (r_j), but with requests in flight the client does not
// know which of its other requests the server had counted by then. It can
// still bound what it may send safely. Count units: sent is every unit sent
// to the host, done every unit whose response has arrived, and a request j
// remembers done_j, the value of done when j was sent. A request the server
// counted after deciding j is one that was not answered before j left, so
// at most (sent − cost_j − done_j) units were counted after j; refills and
// resets only add to the quota. Hence the server will accept anything while
//
//	sent ≤ ceiling_j = done_j + r_j + cost_j
//
// Every ceiling_j is such a lower bound, however late or out of order its
// response arrives, so the host keeps their maximum: the tightest bound it
// has proven. New requests go out while they fit under it. When they no
// longer fit, they wait for responses (which may raise it) or for the
// quota's reset, after which one probe request goes out alone to learn the
// new state. A host starts with one such probe, so that not even the first
// burst of a batch meets a spent quota blindly.
//
// The bound assumes the client is the quota's only user and knows each
// request's cost. A 429 proves an assumption wrong (another client shares
// the key, the limit shrank): the host then trusts nothing sent before it
// (a new epoch), waits max(Retry-After, reset), and probes again.

// Learning modes of a host.
const (
	modeFresh = iota // nothing known yet: one probe at a time
	modeOpen         // the host sends no rate-limit headers: no bound
	modeKnown        // sends are bounded by ceiling
)

// defaultReset is assumed when a spent quota gives no reset time: the
// headers' own resolution.
const defaultReset = time.Second

// hostState is the learned quota of one host. Its methods are safe for
// concurrent use.
type hostState struct {
	mu       sync.Mutex
	learn    bool // false: only Retry-After holds apply (IgnoreRemaining)
	mode     int
	epoch    uint64
	sent     int64 // units sent
	done     int64 // units answered
	inflight int64 // units sent and not yet answered or failed
	ceiling  int64
	// probeAt is when a blocked host may send a probe: the reset of the
	// quota that set the ceiling. probing is true while one is out.
	probeAt time.Time
	probing bool
	// capacity is the most units ever seen available on an admitted
	// response (remaining + its cost): a lower bound of the quota's size.
	capacity int64
	// holdUntil is set by Retry-After on a 429 or 503: nothing is sent to
	// the host before it, learning or not.
	holdUntil time.Time
	changed   chan struct{} // closed and replaced when the state changes
	lastUsed  time.Time
}

// ticket is one granted send.
type ticket struct {
	doneAtSend int64
	cost       int64
	epoch      uint64
	probe      bool
}

func newHostState(learn bool) *hostState {
	return &hostState{learn: learn, changed: make(chan struct{})}
}

// try grants a send of cost units at now, or says until when to wait
// (wake; zero means "until the state changes").
func (h *hostState) try(cost int64, now time.Time) (tk ticket, ok bool, wake time.Time) {
	h.lastUsed = now
	switch {
	case now.Before(h.holdUntil):
		return tk, false, h.holdUntil
	case !h.learn || h.mode == modeOpen || cost == 0:
		return h.grant(cost, false), true, wake // a free request spends no quota
	case h.mode == modeFresh:
		if !h.probing {
			return h.grant(cost, true), true, wake
		}
		return tk, false, wake // the probe's answer decides
	case h.sent+cost <= h.ceiling:
		return h.grant(cost, false), true, wake
	case now.Before(h.probeAt):
		return tk, false, h.probeAt
	case !h.probing && (h.inflight == 0 || h.inflight+cost <= h.capacity):
		// The quota has been restored since the ceiling's response; even if
		// every unit in flight is counted after the restore, cost fits.
		return h.grant(cost, true), true, wake
	}
	return tk, false, wake // wait for the probe or the requests in flight
}

func (h *hostState) grant(cost int64, probe bool) ticket {
	if probe {
		h.probing = true
	}
	h.sent = addSat(h.sent, cost)
	h.inflight += cost
	return ticket{doneAtSend: h.done, cost: cost, epoch: h.epoch, probe: probe}
}

// response is what a finished attempt tells the host.
type response struct {
	arrived bool // a response came back (false: the attempt failed)
	at      time.Time
	status  int
	rl      RateLimit
	hasRL   bool
	ra      time.Duration
	hasRA   bool
}

// finish records the end of tk's attempt.
func (h *hostState) finish(tk ticket, r response) {
	h.mu.Lock()
	defer h.mu.Unlock()
	defer h.broadcast()
	h.inflight -= tk.cost
	if tk.probe {
		h.probing = false
	}
	if !r.arrived {
		return // perhaps counted, perhaps not: it stays in sent, not in done
	}
	h.done = addSat(h.done, tk.cost)
	throttled := r.status == http.StatusTooManyRequests || r.status == http.StatusServiceUnavailable
	if throttled && r.hasRA {
		h.holdUntil = later(h.holdUntil, r.at.Add(r.ra))
	}
	if !h.learn {
		return
	}
	if r.status == http.StatusTooManyRequests {
		// The bound was wrong: trust nothing sent so far and wait until the
		// server says the quota is back.
		wait, told := serverWait(r.ra, r.hasRA, r.rl, r.hasRL)
		if !told {
			wait = defaultReset
		}
		if h.mode != modeKnown || tk.epoch == h.epoch {
			h.mode = modeKnown
			h.epoch++
			h.ceiling = h.sent
			h.probeAt = r.at.Add(wait)
		} else {
			h.probeAt = later(h.probeAt, r.at.Add(wait))
		}
		return
	}
	if !r.hasRL {
		if h.mode == modeFresh {
			h.mode = modeOpen
		}
		return
	}
	if h.mode == modeKnown && tk.epoch != h.epoch {
		return // sent before a 429 proved the old bound wrong
	}
	c := addSat(addSat(tk.doneAtSend, r.rl.Remaining), tk.cost)
	reset := r.rl.Reset
	if reset == 0 {
		reset = defaultReset
	}
	switch {
	case h.mode != modeKnown || c > h.ceiling:
		h.mode, h.ceiling, h.probeAt = modeKnown, c, r.at.Add(reset)
	case c == h.ceiling:
		h.probeAt = later(h.probeAt, r.at.Add(reset))
	}
	if r.status < 400 {
		h.capacity = max(h.capacity, addSat(r.rl.Remaining, tk.cost))
	}
}

// broadcast wakes every waiter; h.mu is held.
func (h *hostState) broadcast() {
	close(h.changed)
	h.changed = make(chan struct{})
}

// acquire waits until a send of cost units is granted. It fails at once
// with ErrWaitTooLong when the wait has a known end beyond maxWait or the
// context's deadline, and with the context's error when it is cancelled.
func (h *hostState) acquire(ctx context.Context, host string, cost int64, maxWait time.Duration) (ticket, time.Duration, error) {
	var waited time.Duration
	for {
		h.mu.Lock()
		now := time.Now()
		tk, ok, wake := h.try(cost, now)
		changed := h.changed
		h.mu.Unlock()
		if ok {
			return tk, waited, nil
		}
		var timer *time.Timer
		var fired <-chan time.Time
		if !wake.IsZero() {
			d := wake.Sub(now)
			if err := checkWait(ctx, d, maxWait, "quota of "+host); err != nil {
				return tk, waited, err
			}
			timer = time.NewTimer(d)
			fired = timer.C
		}
		select {
		case <-changed:
		case <-fired:
		case <-ctx.Done():
		}
		if timer != nil {
			timer.Stop()
		}
		waited += time.Since(now)
		if err := ctx.Err(); err != nil {
			return tk, waited, err
		}
	}
}

// checkWait reports an error if a wait of d would outlast maxWait or ctx's
// deadline (then waiting is pointless: fail now, as x/time/rate does).
func checkWait(ctx context.Context, d, maxWait time.Duration, what string) error {
	if d > maxWait {
		return fmt.Errorf("%w: %s: %v is longer than the longest wait, %v", ErrWaitTooLong, what, d.Round(time.Millisecond), maxWait)
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
		return fmt.Errorf("%w: %s: waiting %v would pass the context deadline: %w",
			ErrWaitTooLong, what, d.Round(time.Millisecond), context.DeadlineExceeded)
	}
	return nil
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// addSat adds non-negative a and b, saturating instead of overflowing.
func addSat(a, b int64) int64 {
	if s := a + b; s >= a {
		return s
	}
	return 1<<63 - 1
}
