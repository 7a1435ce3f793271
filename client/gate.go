package client

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

var (
	// ErrWaitTooLong is returned instead of waiting when a wait has a known
	// end beyond the Transport's MaxWait or the context's deadline: waiting
	// could not help. When the deadline is the reason, the error also wraps
	// context.DeadlineExceeded.
	ErrWaitTooLong = errors.New("wait too long")

	// ErrExceedsBurst is returned by a Gate asked for more units than its
	// limit can ever admit at once (a cost above the burst), and by
	// Transport for a request whose body is larger than the whole of a
	// quota of content bytes its host states: no wait helps.
	ErrExceedsBurst = errors.New("cost exceeds the limit's burst")
)

// A Gate paces work against a limit, local or shared. Wait blocks until
// cost units may proceed and spends them, or returns an error: the
// context's error when it is cancelled, an error wrapping
// ErrWaitTooLong (and context.DeadlineExceeded) at once when the wait would
// outlast the context's deadline, ErrExceedsBurst when no wait can help, or
// the limiter's error (wrapping sluice.ErrStoreUnavailable when it could
// not decide). A refused request, or one whose context had already ended,
// spends nothing; a queue's slot, once granted, stays spent even if the
// caller stops waiting for it. Cost 0 never waits. Implementations must be
// safe for concurrent use.
//
// This package has two: LimiterGate, over any sluice.Limiter (in memory
// for one process, on a Redis store for a fleet), and APIGate, which asks a
// sluice server's decision API.
type Gate interface {
	Wait(ctx context.Context, cost int64) error
}

// A LeaseGate is a Gate whose admissions can hold capacity until the work
// ends: a gate over concurrency limits (sluice.Concurrency), which count
// work in flight rather than a rate. Acquire waits as Wait does and
// returns the function that gives the admission's leases back: call it
// once, when the work has ended (calling it again does nothing). Transport
// acquires from a LeaseGate instead of waiting for it, and releases when
// the response's body is closed or the attempt fails.
type LeaseGate interface {
	Gate
	Acquire(ctx context.Context, cost int64) (release func(), err error)
}

// GateFunc adapts a function to a Gate.
type GateFunc func(ctx context.Context, cost int64) error

// Wait calls f(ctx, cost).
func (f GateFunc) Wait(ctx context.Context, cost int64) error { return f(ctx, cost) }

// LimiterGate is a Gate over a sluice.Limiter: every Wait checks its limits
// for one key, all of them together, and sleeps exactly as long as the
// decision says (RetryAfter when refused, then asks again; Delay when a
// leaky-bucket queue admits with a delay). It is safe for concurrent use:
// its waiters ask the limiter at once, as many at a time as come, and line
// up only after a refusal, so that one of them asks again rather than all
// of them at the same instant (those that come meanwhile line up behind).
//
// Any algorithm paces: GCRA or a token bucket let bursts through up to
// their burst; a leaky-bucket queue (sluice.LeakyBucket(n,
// per).WithMaxWait(d)) admits every call at once with its own Delay, so
// that calls leave evenly spaced and the limiter is asked once per call.
//
// It is a LeaseGate: over concurrency limits (sluice.Concurrency), Acquire
// holds a slot until its release, and a waiter refused by them waits for a
// slot as sluice.Limiter.Wait does (woken when a slot is released through
// the same Limiter, polling for slots released elsewhere), not for the
// lease time the refusal names. Wait over concurrency limits holds its
// slots until their leases expire. The zero LimiterGate has no limiter:
// its Wait and Acquire return an error wrapping sluice.ErrStoreUnavailable.
type LimiterGate struct {
	limiter *sluice.Limiter
	key     string
	limits  []sluice.Limit
	turn    *turn
	sent    *sentWindows
}

// NewLimiterGate returns a Gate spending limits for key in limiter's store.
// With a Redis store, every process that uses the same key shares the
// limits: the way to pace a fleet of batch workers together. Invalid
// limits make every Wait fail with an error wrapping sluice.ErrInvalidCheck.
func NewLimiterGate(limiter *sluice.Limiter, key string, limits ...sluice.Limit) *LimiterGate {
	return &LimiterGate{limiter: limiter, key: key, limits: append([]sluice.Limit(nil), limits...), turn: newTurn(), sent: newSentWindows(limits)}
}

// NewLocalGate returns a Gate over limits kept in this process's memory
// (a memory store of its own, with no background goroutine), for one batch
// job or one service's calls to a dependency:
//
//	client.NewLocalGate(sluice.LeakyBucket(50, time.Second).WithMaxWait(time.Minute))
func NewLocalGate(limits ...sluice.Limit) *LimiterGate {
	store := memory.New(memory.WithSweepInterval(0), memory.WithClockResolution(0), memory.WithShards(1), memory.WithMaxKeys(len(limits)+1))
	return NewLimiterGate(sluice.NewLimiter(store), "client", limits...)
}

// Wait implements Gate. The units it admits count in the gate's windows
// (see Acquire) from when it returns.
func (g *LimiterGate) Wait(ctx context.Context, cost int64) error {
	_, sent, err := g.acquire(ctx, cost)
	if sent != nil {
		sent()
	}
	return err
}

// Acquire implements LeaseGate. Its release gives the leases back with a
// context of its own (not ctx, which may have ended by then); an error
// then is not reported: the leases expire by themselves.
//
// Over window limits (sluice.FixedWindow, SlidingLog, SlidingCounter: q
// per w), the units it admits also count in a window of the gate's own
// from their admission until w after their release, and it admits at most
// q of them in any span of w (a cost above q, which no wait admits, is
// refused at once with ErrExceedsBurst): a server that counts a request
// when it arrives (later than its send) and answers after, and enforces
// the same window, admits every request the gate admits to this process,
// however long each takes to arrive. Release each admission when its answer
// arrives (Transport does, when the response's body is closed or the
// attempt fails); one never released holds its units in the windows for
// good.
func (g *LimiterGate) Acquire(ctx context.Context, cost int64) (release func(), err error) {
	release, sent, err := g.acquire(ctx, cost)
	if sent == nil {
		return release, err
	}
	if release == nil {
		return sent, err
	}
	leases := release
	return func() { sent(); leases() }, err
}

// acquire is Acquire, which returns apart the function that gives back
// the leases (release) and the one that ends the admission's units' time
// in flight in the gate's windows (sent), each nil when there is none.
func (g *LimiterGate) acquire(ctx context.Context, cost int64) (release, sent func(), err error) {
	if g.limiter == nil {
		return nil, nil, fmt.Errorf("client: %w: the zero LimiterGate has no limiter (make one with NewLimiterGate)", sluice.ErrStoreUnavailable)
	}
	if cost <= 0 {
		return func() {}, nil, ctx.Err()
	}
	if err := g.sent.exceeds(cost); err != nil {
		return nil, nil, err
	}
	checks := make([]sluice.Check, len(g.limits))
	for i, l := range g.limits {
		checks[i] = sluice.Check{Key: g.key, Limit: l, Cost: cost}
	}
	var d sluice.Decision
	slots := false // refused by a concurrency limit: wait for a slot
	err = g.turn.admit(ctx, cost, func() (*refusal, error) {
		spent, back, err := g.sent.reserve(ctx, cost, maxHint)
		if err != nil {
			return nil, err
		}
		if slots {
			// A slot frees when its holder releases it, which no clock
			// foresees: wait for one as the Limiter does, until what is
			// left of a Transport's Retry.MaxWait has passed (nor does
			// Wait begin a known wait that would pass it).
			start := time.Now()
			wctx, stop := boundWait(ctx)
			err = g.limiter.Wait(wctx, checks, &d)
			stop()
			blocked(ctx, start)
		} else {
			err = g.limiter.Allow(ctx, checks, &d)
		}
		switch {
		case err != nil && slots && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded):
			back() // Wait gave up: its deadline passed, or would before a wait it knew of ended
			return nil, fmt.Errorf("client: gate: %w: %w", ErrWaitTooLong, err)
		case err != nil:
			back()
			return nil, fmt.Errorf("client: gate: %w", err)
		case d.Allowed:
			sent = spent
			return nil, nil
		}
		back()
		if slots = holdsSlots(checks, &d); slots {
			return &refusal{limit: d.Limit.Name()}, nil
		}
		return &refusal{retryAfter: d.RetryAfter, limit: d.Limit.Name(), burst: d.Limit.Burst()}, nil
	})
	if err != nil {
		return nil, nil, err
	}
	release = g.releaser(checks, &d)
	if err := checkGateWait(ctx, d.Delay, maxHint, "gate "+d.Limit.Name()); err != nil {
		return release, sent, err // the slot is spent: a queue cannot give it back
	}
	return release, sent, gateSleep(ctx, d.Delay)
}

// holdsSlots reports whether a concurrency check of checks refused in d.
func holdsSlots(checks []sluice.Check, d *sluice.Decision) bool {
	for i := range checks {
		if !d.Statuses[i].Allowed && !checks[i].Limit.Shadow() && checks[i].Limit.Algorithm() == sluice.AlgorithmConcurrency {
			return true
		}
	}
	return false
}

// releaser returns the function that gives back the leases d took for
// checks, once; a no-op when d took none.
func (g *LimiterGate) releaser(checks []sluice.Check, d *sluice.Decision) func() {
	held := false
	for _, st := range d.Statuses {
		held = held || st.Lease != 0
	}
	if !held {
		return func() {}
	}
	taken := sluice.Decision{Allowed: true, Statuses: append([]sluice.Status(nil), d.Statuses...)}
	var once sync.Once
	return func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), DefaultTimeout)
			defer cancel()
			g.limiter.Release(ctx, checks, &taken) // on error the leases expire by themselves
		})
	}
}

// APIGate is a Gate that asks a sluice server's decision API (POST
// /v1/check) for every Wait, with the CheckRequest it was made with and the
// Wait's cost: a limit shared by every client of that server, whatever its
// language or store. Refused, it sleeps the decision's retryAfterMs and asks
// again; admitted with a delay (a leaky-bucket queue), it sleeps delayMs.
// Concurrent Waits ask the server at once, each its own round trip, and
// line up only after a refusal, as LimiterGate's do.
// Errors of Client.Check are returned as they are (wrapping
// sluice.ErrStoreUnavailable when the server could not decide or could not
// be reached). It is safe for concurrent use.
type APIGate struct {
	client *Client
	req    CheckRequest
	turn   *turn
}

// Gate returns an APIGate that checks req (typically with a Subject naming
// the shared budget, e.g. "nightly-export") for each Wait. req.Cost is
// replaced by the Wait's cost.
func (c *Client) Gate(req CheckRequest) *APIGate {
	return &APIGate{client: c, req: req, turn: newTurn()}
}

// Wait implements Gate.
func (g *APIGate) Wait(ctx context.Context, cost int64) error {
	if g.client == nil {
		return fmt.Errorf("client: %w: the zero APIGate has no client (make one with Client.Gate)", sluice.ErrStoreUnavailable)
	}
	if cost <= 0 {
		return ctx.Err()
	}
	req := g.req
	req.Cost = &cost
	var res *CheckResponse
	err := g.turn.admit(ctx, cost, func() (*refusal, error) {
		r, err := g.client.Check(ctx, req)
		switch {
		case err != nil:
			return nil, err
		case r.Allowed:
			res = r
			return nil, nil
		}
		return &refusal{retryAfter: r.Wait(), limit: r.Limit}, nil
	})
	if err != nil {
		return err
	}
	d := millis(res.DelayMs)
	if err := checkGateWait(ctx, d, maxHint, "gate "+res.Limit); err != nil {
		return err
	}
	return gateSleep(ctx, d)
}

// millis converts milliseconds from the API to a duration in [0, maxHint].
func millis(ms int64) time.Duration {
	if ms <= 0 {
		return 0
	}
	if ms >= int64(maxHint/time.Millisecond) {
		return maxHint
	}
	return time.Duration(ms) * time.Millisecond
}

// gateCall is how long a Gate may take to admit without waiting: its round
// trips to its store or decision API. Of a Gate's call, what lasts longer
// counts as a wait (see gateWaits); and a Gate's context ends this long
// after what is left of Retry.MaxWait has passed, so that one that can
// admit at once, however little is left, or that asks again after a wait
// that fitted, is not failed for want of time to say so.
const gateCall = 20 * time.Millisecond

// gateWaits is the context a Transport asks its Gate with. The Gates of
// this package add to it every span they block for (see blocked): in line
// behind a refused waiter, for a refusal's RetryAfter, a slot, a window's
// room, a queue's Delay. Their round trips to a store or a decision API
// are not waits. A Gate's call spends of Retry.MaxWait the spans reported,
// no more than the call lasted (spans may overlap: a Gate of another
// package may ask two Gates of this package at once), or what the call
// lasts beyond gateCall, whichever is longer: the time a Gate of another
// package spends, even one that asks a Gate of this package in turn, is
// never dropped. Every wait of a Gate of this package is bounded by what is
// left of Retry.MaxWait (see gateLeft), not by the context's deadline, which
// is gateCall past it, for the round trips: a wait it knows the end of (a
// refusal's RetryAfter, a queue's Delay, a window's wake) is not begun past
// it (see checkGateWait), and one whose end it does not know (in line, for
// a slot, for a window's room) ends there (see boundWait); either fails
// with ErrWaitTooLong.
type gateWaits struct {
	context.Context
	start  time.Time     // when the Gate was called
	left   time.Duration // what was left of Retry.MaxWait then; may be 0 or less
	waited atomic.Int64
}

type gateWaitsKey struct{}

func (c *gateWaits) Value(key any) any {
	if key == (gateWaitsKey{}) {
		return c
	}
	return c.Context.Value(key)
}

// spent returns how much of Retry.MaxWait the Gate asked with c has spent,
// its call having lasted call: the spans it reported, call at most, or what
// the call lasted beyond gateCall, whichever is longer.
func (c *gateWaits) spent(call time.Duration) time.Duration {
	return max(min(time.Duration(c.waited.Load()), call), call-gateCall)
}

// gateLeft returns what is left now of the Retry.MaxWait of the Transport
// that asked with ctx, which may be 0 or less; ok is false when ctx is not
// a Transport's gateWaits.
func gateLeft(ctx context.Context) (left time.Duration, ok bool) {
	c, ok := ctx.Value(gateWaitsKey{}).(*gateWaits)
	if !ok {
		return 0, false
	}
	return c.left - c.spent(time.Since(c.start)), true
}

// checkGateWait is checkWait for a Gate's known wait of d: when ctx is a
// Transport's gateWaits, a wait above 0 that would outlast what is left of
// Retry.MaxWait now (which may be nothing) fails with ErrWaitTooLong too.
func checkGateWait(ctx context.Context, d, maxWait time.Duration, what string) error {
	if left, ok := gateLeft(ctx); ok && d > 0 && d > left {
		return fmt.Errorf("%w: %s: %v is longer than what is left of Retry.MaxWait, %v",
			ErrWaitTooLong, what, d.Round(time.Millisecond), max(left, 0).Round(time.Millisecond))
	}
	return checkWait(ctx, d, maxWait, what)
}

// boundWait returns the context for a Gate's wait whose end it does not
// know: when ctx is a Transport's gateWaits, ctx ending when what is left of
// Retry.MaxWait now has passed (at once when nothing is), and the function
// that releases it; ctx itself and a no-op otherwise. A wait that it ends
// while ctx is alive fails with tooLong's error.
func boundWait(ctx context.Context) (context.Context, context.CancelFunc) {
	left, ok := gateLeft(ctx)
	if !ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, max(left, 0))
}

// tooLong returns the error of a wait for what, bounded by boundWait, that
// ended before its end came: ctx's error when ctx has ended, else an error
// wrapping ErrWaitTooLong.
func tooLong(ctx context.Context, what string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return fmt.Errorf("client: gate: %w: %s: longer than what was left of Retry.MaxWait", ErrWaitTooLong, what)
}

// gateSleep is sleep for a Gate: a wait of d above 0 is added to ctx's
// gateWaits (see blocked).
func gateSleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	defer blocked(ctx, time.Now())
	return sleep(ctx, d)
}

// blocked adds to ctx's gateWaits, if it has one, the span since start
// that a Gate blocked for.
func blocked(ctx context.Context, start time.Time) {
	if c, ok := ctx.Value(gateWaitsKey{}).(*gateWaits); ok {
		c.waited.Add(int64(time.Since(start)))
	}
}
