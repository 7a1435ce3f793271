package sim

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/sluice-dev/sluice"
)

// replayer is one contender's replay: its per-key states (indexed by key,
// not hashed), what it measures, and its clients' pending retries.
type replayer struct {
	s        *simulation
	j        *job
	lim      sluice.Limit
	states   []sluice.State
	win      *windowMax
	isLog    bool // a sliding log or a concurrency limit: its state is a log
	next     int  // the next trace arrival
	retries  retryQueue
	rng      *rand.Rand
	gap, seq int64 // µs; retry creation counter

	// With retries each contender's clients behave differently, so the
	// reference runs alongside on the very requests this contender sees.
	shadow    bool
	refStates []sluice.State

	sumDelay, maxDelay int64 // µs
}

// event is one request to decide: an arrival of the trace (idx ≥ 0) or a
// retry (idx -1).
type event struct {
	at, cost     int64
	key, attempt int32
	idx          int
}

// replay runs one contender over the trace and its retries.
func (s *simulation) replay(ctx context.Context, j *job, win *windowMax) error {
	keys := len(s.tr.Keys)
	r := &replayer{s: s, j: j, lim: j.c.Limit, states: make([]sluice.State, keys), win: win,
		isLog: usesLog(j.c.Limit.Algorithm()),
		rng:   rand.New(rand.NewPCG(s.cfg.Seed, s.cfg.Seed^0x7e7a1)),
		gap:   int64(s.cfg.Retry.Gap.D() / time.Microsecond)}
	win.reset(keys, s.w, len(s.tr.Arrivals), s.req)
	j.bins = make([]int64, s.bins.n)
	if r.isLog {
		j.peaks = make([]int32, keys)
	}
	if s.retrying {
		j.attempts = make([]int64, s.bins.n)
		r.shadow = !s.isReference(r.lim)
		if r.shadow {
			r.refStates = make([]sluice.State, keys)
		}
	} else {
		j.allowed = make([]uint64, (len(s.tr.Arrivals)+63)/64)
	}
	done, every := ctx.Done(), r.checkEvery()
	if s.byKey != nil {
		// Without retries keys never interact: replaying them one after
		// another decides the same requests, and keeps each key's state and
		// admissions together in memory.
		for i := range s.byKey {
			if j.res.Decisions&every == 0 {
				select {
				case <-done:
					return ctx.Err()
				default:
				}
			}
			a := &s.byKey[i]
			if err := r.decide(event{at: a.At, cost: a.Cost, key: a.Key, idx: int(s.byKeyIdx[i])}); err != nil {
				return err
			}
		}
		r.finish()
		return nil
	}
	for e, ok := r.pop(); ok; e, ok = r.pop() {
		if j.res.Decisions&every == 0 {
			select {
			case <-done:
				return ctx.Err()
			default:
			}
		}
		if err := r.decide(e); err != nil {
			return err
		}
	}
	r.finish()
	return nil
}

// checkEvery returns the mask of decision counts at which replay looks at
// its context: about every 1024 decisions of work (see Request.MaxWork), so
// fewer decisions apart when a decision sums a log of up to its quantity.
func (r *replayer) checkEvery() int64 {
	entries := int64(0)
	if r.isLog {
		entries = r.lim.Quantity()
	}
	if r.shadow {
		entries += r.s.cfg.Quantity
	}
	per := 1 + entries/logEntriesPerDecision // work of one decision, at most
	every := int64(1024)
	for every > 1 && per > 1024/every {
		every /= 2
	}
	return every - 1
}

// pop returns the next request in time order: trace arrivals before
// retries due at the same µs, retries in the order they were made.
func (r *replayer) pop() (event, bool) {
	arr := r.s.tr.Arrivals
	if r.next < len(arr) && (len(r.retries) == 0 || arr[r.next].At <= r.retries[0].at) {
		a := &arr[r.next]
		r.next++
		return event{at: a.At, cost: a.Cost, key: a.Key, idx: r.next - 1}, true
	}
	if len(r.retries) > 0 {
		rt := r.retries.pop()
		return event{at: rt.at, cost: rt.cost, key: rt.key, attempt: rt.attempt, idx: -1}, true
	}
	return event{}, false
}

// decide runs the contender's Decide on e's key and accounts for it.
func (r *replayer) decide(e event) error {
	res := &r.j.res
	res.Decisions++
	next, st, err := r.lim.Decide(r.states[e.key], e.at, e.cost)
	if err != nil {
		return fmt.Errorf("arrival at %d µs: %w", e.at, err)
	}
	if r.shadow {
		if err := r.compare(e, st.Allowed); err != nil {
			return err
		}
	}
	if r.j.attempts != nil {
		r.j.attempts[r.s.bins.index(e.at)] += e.cost
	}
	if !st.Allowed {
		res.Rejected++
		if r.s.retrying {
			r.retry(e, st.RetryAfter)
		}
		return nil
	}
	r.states[e.key] = next
	res.Admitted++
	res.AdmittedUnits += e.cost
	if e.idx >= 0 && r.j.allowed != nil {
		r.j.allowed[e.idx>>6] |= 1 << (e.idx & 63)
	}
	t := e.at
	if st.Delay > 0 { // a leaky-bucket queue: the request proceeds later
		d := int64(st.Delay / time.Microsecond)
		res.Delayed++
		r.sumDelay += d
		r.maxDelay = max(r.maxDelay, d)
		t += d
	}
	if e.cost > 0 {
		seq := e.idx
		if seq < 0 { // a retry: decided in time order, after every arrival so far
			seq = math.MaxInt
		}
		r.win.add(e.key, t, e.cost, seq)
		r.j.bins[r.s.bins.index(t)] += e.cost
	}
	if r.isLog {
		r.j.peaks[e.key] = max(r.j.peaks[e.key], int32(min(len(next.Log), 1<<31-1)))
	}
	return nil
}

// compare decides e with the reference too and counts a disagreement.
func (r *replayer) compare(e event, allowed bool) error {
	next, st, err := r.s.ref.Decide(r.refStates[e.key], e.at, e.cost)
	if err != nil {
		return fmt.Errorf("reference at %d µs: %w", e.at, err)
	}
	if st.Allowed {
		r.refStates[e.key] = next
	}
	if st.Allowed == allowed {
		return nil
	}
	res := &r.j.res
	res.Disagreements++
	if allowed {
		res.FalseAllows++
	} else {
		res.FalseDenials++
	}
	return nil
}

// retry schedules the refused client's next attempt, or counts it giving up.
func (r *replayer) retry(e event, after time.Duration) {
	p, res := &r.s.cfg.Retry, &r.j.res
	if int(e.attempt) >= p.Max || after == sluice.Never {
		res.GaveUp++
		return
	}
	wait := int64(after / time.Microsecond)
	if p.Impatient > 0 && r.rng.Float64() < p.Impatient {
		wait = r.gap
	}
	if e.at+wait >= r.s.tr.End {
		res.GaveUp++
		return
	}
	r.seq++
	res.Retries++
	r.retries.push(retry{at: e.at + wait, seq: r.seq, key: e.key, cost: e.cost, attempt: e.attempt + 1})
}

// finish fills in the figures known only at the end.
func (r *replayer) finish() {
	res, win := &r.j.res, r.win
	res.WorstWindow, res.WorstPeriod = win.worst, win.worstPeriod
	if win.worst > 0 {
		res.WorstAt = Duration(time.Duration(win.worstAt-r.s.tr.Start) * time.Microsecond)
		res.WorstKey = r.s.tr.Keys[win.worstKey]
	}
	if res.Admitted > 0 {
		res.MeanDelay = Duration(time.Duration(r.sumDelay/res.Admitted) * time.Microsecond)
	}
	res.MaxDelay = Duration(time.Duration(r.maxDelay) * time.Microsecond)
}
