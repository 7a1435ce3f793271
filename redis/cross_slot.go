package redis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"

	"github.com/sluice-dev/sluice"
)

// reservation is what one slot's reserve run admitted and how to undo it.
type reservation struct {
	idx []int // the slot's checks
	// undo is, per check, the mark, DUMP and PEXPIRETIME ("" when not
	// written), then the time of the run that reserved (µs since
	// sluice.Epoch, by its slot's clock): a state reset at or after it, or
	// created after it, never counted the reservation (see refund.lua).
	undo []string
}

// crossSlot decides a call whose checks span Cluster slots: one reserve
// run per slot in ascending slot order; on the first slot that refuses,
// refund the reservations before it and decide the slots after it without
// writing. It returns the earliest time a slot was decided at: a window
// that ended between two slots' runs counted what the earlier slots
// admitted. When ats is not nil, ats[i] is the time check i's slot was
// decided at (the earliest for slots decided after a refusal, which write
// nothing). See the package documentation for what this does and does not
// guarantee.
func (s *Store) crossSlot(ctx context.Context, checks []sluice.Check, keys []string, groups [][]int, out []sluice.Status, ats []int64) (int64, error) {
	token := strconv.FormatUint(rand.Uint64(), 36) // tags this call's writes
	var (
		done []reservation
		now  int64
	)
	for gi, idx := range groups {
		r, err := s.run(ctx, modeReserve, token, checks, keys, idx, out)
		if err != nil {
			s.rollback(ctx, token, checks, keys, done)
			return 0, s.onNode(&checks[idx[0]], err)
		}
		if len(done) == 0 || r.now < now {
			now = r.now
		}
		if ats != nil {
			for _, i := range idx {
				ats[i] = r.now
			}
		}
		if r.refused {
			s.settle(ctx, token, checks, keys, done, groups[gi+1:], out)
			for _, rest := range groups[gi+1:] {
				for _, i := range rest {
					if i < len(ats) {
						ats[i] = now
					}
				}
			}
			return now, nil
		}
		done = append(done, reservation{idx: idx, undo: r.undo})
	}
	return now, nil
}

// nodeError is the failure of the master serving one slot of a call that
// spans slots (a decision or a charge). FailedNode names it as Store.Node
// does, so that a failover.Store counts the failure against that master's
// breaker only, not against the healthy masters of the call's other slots.
type nodeError struct {
	node string
	err  error
}

func (e *nodeError) Error() string { return e.err.Error() }
func (e *nodeError) Unwrap() error { return e.err }

// FailedNode names the master that failed (see failover.Options.Node).
func (e *nodeError) FailedNode() string { return e.node }

// onNode returns err, the failure of the master serving c's key, naming
// that master on a Cluster (a store of one master needs no name).
func (s *Store) onNode(c *sluice.Check, err error) error {
	if !s.cluster {
		return err
	}
	return &nodeError{node: s.Node(c), err: err}
}

// settle completes a refused call: it refunds the reservations done (their
// consuming checks then report as peeks) and decides the groups not yet
// run without writing, all at once. The refunds run on a context of their
// own (see undoContext): the caller's may end now that its answer is
// known, and its reservations must not outlive it.
//
// The refusal stands whatever settling meets: a refund that fails leaves
// its reservation in place, counted in Unrefunded, and its checks report
// what the reservation took; a dry run that fails leaves its checks
// unknown, reported Undecided (see sluice.Status). A refusal Redis decided is never turned into an error,
// which a failover would decide by its own rule.
func (s *Store) settle(ctx context.Context, token string, checks []sluice.Check, keys []string,
	done []reservation, rest [][]int, out []sluice.Status) {
	uctx, cancel := s.undoContext(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for _, r := range done {
		// A refund that failed is not retried: it may have run before the
		// error (a timeout), and a second undo would hand out units twice.
		wg.Go(func() {
			if s.refund(uctx, token, checks, keys, r, out) != nil {
				s.unrefunded.Add(1)
			}
		})
	}
	for _, idx := range rest {
		wg.Go(func() {
			if _, err := s.run(ctx, modeDry, "", checks, keys, idx, out); err != nil {
				for _, i := range idx {
					// Unread: it did not refuse the call, and nothing
					// measures what remains.
					out[i] = sluice.Status{Allowed: true, Undecided: true}
				}
			}
		})
	}
	wg.Wait()
}

// Unrefunded counts the reservations of calls spanning Cluster slots that
// could not be refunded: a call that a later slot refused, or that Redis
// failed in the middle of, and whose refund of an earlier slot's
// reservation failed too. Each leaves that slot's reserved units counted
// as used until its window passes or its bucket refills, which errs on the
// side of refusing; the call is refused (or fails) all the same. It is
// safe for concurrent use; the zero Store counts none.
func (s *Store) Unrefunded() int64 { return s.unrefunded.Load() }

// rollback refunds reservations after an error, on a context of its own
// (the call's may be what ended), best effort: a reservation it cannot
// refund stays consumed, which errs on the side of refusing, and is
// counted in Unrefunded.
func (s *Store) rollback(ctx context.Context, token string, checks []sluice.Check, keys []string, done []reservation) {
	if len(done) == 0 {
		return
	}
	ctx, cancel := s.undoContext(ctx)
	defer cancel()
	scratch := make([]sluice.Status, len(checks))
	for _, r := range done {
		if s.refund(ctx, token, checks, keys, r, scratch) != nil {
			s.unrefunded.Add(1)
		}
	}
}

// undoContext returns the context refunds run on: ctx's values, neither
// its cancellation nor its deadline, and the store's timeout
// (DefaultTimeout without one).
func (s *Store) undoContext(ctx context.Context) (context.Context, context.CancelFunc) {
	timeout := s.timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return context.WithTimeout(context.WithoutCancel(ctx), timeout)
}

// refund runs refund.lua for the checks of r that consumed and writes their
// peeks to out. Each reservation must be refunded at most once. A key
// reset since the reservation, or whose state was created since (evicted,
// deleted), is left alone: the state there now never counted it.
func (s *Store) refund(ctx context.Context, token string, checks []sluice.Check, keys []string, r reservation, out []sluice.Status) error {
	var rkeys []string
	var idx []int
	args := []string{s.timeArg(), token, r.undo[len(r.undo)-1]}
	for j, i := range r.idx {
		mark, dump, expires := r.undo[3*j], r.undo[3*j+1], r.undo[3*j+2]
		if mark == "" {
			continue // did not consume
		}
		var err error
		if args, err = appendCheckArgs(args, &checks[i]); err != nil {
			return err
		}
		args = append(args, mark, dump, expires)
		rkeys = append(rkeys, keys[i])
		idx = append(idx, i)
	}
	if len(idx) == 0 {
		return nil
	}
	for _, i := range idx {
		rkeys = append(rkeys, resetKey(keys[i]))
	}
	msgs, err := s.exec(ctx, s.scripts.refund, rkeys, args).ToArray()
	if err != nil {
		return s.fail("refund script", err)
	}
	if len(msgs) != 1+statusWords*len(idx) {
		return s.fail("refund script", fmt.Errorf("reply of %d words, want %d", len(msgs), 1+statusWords*len(idx)))
	}
	for j, i := range idx {
		if out[i], err = readStatus(msgs, 1+statusWords*j, checks[i].Limit.Algorithm()); err != nil {
			return s.fail("refund script", err)
		}
	}
	return nil
}
