// Package reliability is what sluice's fault and load tests share: a load of
// concurrent clients on a sluice.Limiter that tells, from the outside, which
// decisions came from the primary store and which from the on_store_error
// policy, and times outages and recoveries; and a counter of the decisions a
// failover.Store reports through its OnFallback hook.
//
// The tests of this package run that load against real redis-server
// processes (internal/redistest) while they are killed, restarted, failed
// over, slowed down or cut off (internal/faultproxy). RELIABILITY.md records
// what they measured.
package reliability

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
)

// Source is where a decision came from.
type Source uint8

const (
	// Primary is the primary store (Redis).
	Primary Source = iota
	// Fallback is the failover.Store's on_store_error policy.
	Fallback
)

// A Classifier tells the source of an admitted or refused decision, or
// returns an error if neither the primary nor the policy could have made it.
type Classifier func(d *sluice.Decision) (Source, error)

// Phase counts what the clients saw since the last Mark (or the start).
type Phase struct {
	// Start is when the phase began.
	Start time.Time
	// Calls counts decisions and errors.
	Calls, Primary, Fallback, Errors int64
	// Wrong counts decisions the classifier rejected; Wrongs holds the
	// first few reasons.
	Wrong  int64
	Wrongs []string
	// FirstFallback and LastFallback are the times after Start of the
	// first and the last fallback decision, FirstPrimary of the first
	// primary decision; -1 when there was none.
	FirstFallback, LastFallback, FirstPrimary time.Duration
	// P50, P99 and Max are the latencies of the phase's calls.
	P50, P99, Max time.Duration
}

// A Load runs clients that each decide their own checks in a loop until
// Stop, pausing Pause between calls.
type Load struct {
	lim      *sluice.Limiter
	classify Classifier
	pause    time.Duration
	clients  []*client
	stop     chan struct{}
	wg       sync.WaitGroup

	mu    sync.Mutex
	phase time.Time // start of the current phase
}

type client struct {
	mu sync.Mutex
	counts
}

// counts is a client's phase and totals; its mutex guards it.
type counts struct {
	total                  Totals // since the start, never reset
	since                  time.Time
	calls, prim, fall, err int64
	wrong                  int64
	wrongs                 []string
	firstFall, lastFall    time.Duration
	firstPrim              time.Duration
	lat                    []time.Duration
}

func (c *client) reset(at time.Time) {
	c.counts = counts{total: c.total, since: at, firstFall: -1, lastFall: -1, firstPrim: -1, lat: c.lat[:0]}
}

// Totals counts what the clients saw since the start.
type Totals struct {
	Calls, Primary, Fallback, Errors, Wrong int64
}

// Pause is how long each client of a Load waits between two calls: the
// time a real request spends on its network I/O, during which its
// goroutine is parked. Clients that never park (decisions from an
// in-process fallback take microseconds) would keep Go's scheduler from
// running the goroutine that reads Redis's reply for tens of
// milliseconds, longer than the store's timeout, which no server whose
// handlers do I/O would see.
const Pause = time.Millisecond

// Start starts n clients on lim; client i decides checks(i) in a loop (a
// slice it may keep), pausing Pause between calls, and classify tells the
// source of every decision.
func Start(lim *sluice.Limiter, n int, checks func(i int) []sluice.Check, classify Classifier) *Load {
	l := &Load{lim: lim, classify: classify, pause: Pause, stop: make(chan struct{}), phase: time.Now()}
	for i := range n {
		c := &client{}
		c.reset(l.phase)
		l.clients = append(l.clients, c)
		cs := checks(i)
		l.wg.Go(func() { l.run(c, cs) })
	}
	return l
}

func (l *Load) run(c *client, checks []sluice.Check) {
	var d sluice.Decision
	ctx := context.Background()
	pause := time.NewTimer(0)
	defer pause.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-pause.C:
		}
		start := time.Now()
		err := l.lim.Allow(ctx, checks, &d)
		end := time.Now()
		c.mu.Lock()
		c.calls++
		c.total.Calls++
		c.lat = append(c.lat, end.Sub(start))
		at := end.Sub(c.since)
		switch src, cerr := l.classify(&d); {
		case err != nil:
			c.err++
			c.total.Errors++
			if len(c.wrongs) < 5 {
				c.wrongs = append(c.wrongs, "error: "+err.Error())
			}
		case cerr != nil:
			c.wrong++
			c.total.Wrong++
			if len(c.wrongs) < 5 {
				c.wrongs = append(c.wrongs, cerr.Error())
			}
		case src == Primary:
			c.prim++
			c.total.Primary++
			if c.firstPrim < 0 {
				c.firstPrim = at
			}
		default:
			c.fall++
			c.total.Fallback++
			if c.firstFall < 0 {
				c.firstFall = at
			}
			c.lastFall = at
		}
		c.mu.Unlock()
		pause.Reset(l.pause)
	}
}

// Mark ends the current phase and starts a new one now, which it returns.
func (l *Load) Mark() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.phase = time.Now()
	for _, c := range l.clients {
		c.mu.Lock()
		c.reset(l.phase)
		c.mu.Unlock()
	}
	return l.phase
}

// Phase returns the counts of the current phase over the clients for which
// include returns true (all of them when include is nil).
func (l *Load) Phase(include func(i int) bool) Phase {
	l.mu.Lock()
	p := Phase{Start: l.phase, FirstFallback: -1, LastFallback: -1, FirstPrimary: -1}
	l.mu.Unlock()
	var lat []time.Duration
	earliest := func(a, b time.Duration) time.Duration {
		if a < 0 || b >= 0 && b < a {
			return b
		}
		return a
	}
	for i, c := range l.clients {
		if include != nil && !include(i) {
			continue
		}
		c.mu.Lock()
		p.Calls += c.calls
		p.Primary += c.prim
		p.Fallback += c.fall
		p.Errors += c.err
		p.Wrong += c.wrong
		if len(p.Wrongs) < 5 {
			p.Wrongs = append(p.Wrongs, c.wrongs...)
		}
		p.FirstFallback = earliest(p.FirstFallback, c.firstFall)
		p.FirstPrimary = earliest(p.FirstPrimary, c.firstPrim)
		p.LastFallback = max(p.LastFallback, c.lastFall)
		lat = append(lat, c.lat...)
		c.mu.Unlock()
	}
	if len(lat) > 0 {
		slices.Sort(lat)
		p.P50 = lat[len(lat)/2]
		p.P99 = lat[min(len(lat)-1, len(lat)*99/100)]
		p.Max = lat[len(lat)-1]
	}
	return p
}

// WaitFor polls the current phase every 10 ms until cond holds, or fails
// after timeout.
func (l *Load) WaitFor(timeout time.Duration, what string, cond func(p Phase) bool) (Phase, error) {
	deadline := time.Now().Add(timeout)
	for {
		p := l.Phase(nil)
		if cond(p) {
			return p, nil
		}
		if time.Now().After(deadline) {
			return p, fmt.Errorf("%s: not within %v (phase %+v)", what, timeout, p)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Stop stops the clients, waits for them and returns what they saw since
// the start.
func (l *Load) Stop() Totals {
	close(l.stop)
	l.wg.Wait()
	var t Totals
	for _, c := range l.clients {
		t.Calls += c.total.Calls
		t.Primary += c.total.Primary
		t.Fallback += c.total.Fallback
		t.Errors += c.total.Errors
		t.Wrong += c.total.Wrong
	}
	return t
}

// Fallbacks counts the decisions a failover.Store reports to its
// failover.Options.OnFallback: pass Hook there.
type Fallbacks struct {
	total, circuit atomic.Int64
}

// Hook is the OnFallback function.
func (f *Fallbacks) Hook(reason error) {
	f.total.Add(1)
	if errors.Is(reason, failover.ErrCircuitOpen) || reason == failover.ErrReturning {
		f.circuit.Add(1)
	}
}

// Total is the number of fallback decisions reported.
func (f *Fallbacks) Total() int64 { return f.total.Load() }

// StoreErrors is the number reported because the primary failed (not
// because the breaker kept the call from it, nor while returning to it).
func (f *Fallbacks) StoreErrors() int64 { return f.total.Load() - f.circuit.Load() }
