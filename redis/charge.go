package redis

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/redis/rueidis"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
)

// chargeIDSlack is how much longer than its limit's failover.ChargeHorizon
// Redis keeps the id of a charge it took: room for a retry sent just
// before the horizon that reaches Redis later (a call is bounded by the
// store's timeout), and for clocks that run at slightly different rates.
const chargeIDSlack = 60_000 // ms

// Charge is ChargeOnce without ids: a charge whose reply is lost (a
// timeout after Redis ran it) and that its caller sends again is taken
// again. failover.Options.Charge accepts it; ChargeOnce is the one to give
// a failover.
func (s *Store) Charge(ctx context.Context, checks []sluice.Check) error {
	return s.charge(ctx, checks, nil, nil)
}

// ChargeOnce tells Redis of units admitted without it: for each check, it
// takes up to Cost units of the check's limit for its key — as many as the
// state has left now, so it never refuses and never takes more than the
// limit holds — exactly as an admission of that many units now would (a
// bucket loses the tokens, a window or a log counts them now), unless
// Redis has taken the charge of the check's id (ids[i] is checks[i]'s)
// before: then it takes nothing, and the check succeeds. Checks of
// AlgorithmConcurrency are skipped; an empty id takes the check's units
// whatever was taken before. It is what failover.Options.ChargeOnce asks
// for: Open's store charges Redis with what its local fallback admitted
// before Redis decides those keys again.
//
// Exactly once: Redis keeps an id it took (a key of its own next to the
// state's, its key followed by ":charge:" and the id, in the state's
// Cluster slot) for failover.ChargeHorizon of the check's limit plus a
// minute from the moment it took it, and from each later charge that
// found it; a charge sent again under the id within that time is taken
// once, whatever became of the calls before it. Sent again later, when
// the units it stands for limit no one any more (a failover drops it by
// then), it is taken again.
//
// Each check is one charge.lua run, all sent at once (one round trip on a
// standalone server or with Sentinel, one per node on a Cluster), bounded
// by the store's timeout and ctx. An error wraps sluice.ErrStoreUnavailable
// as Apply's do; some checks may then have been charged, and a check whose
// call timed out may have been too: send it again under its id. Under
// WithReplicas each run waits for the replicas as an apply run does, a
// charge found taken before included (it writes the id's life again, so
// that the wait covers the write that took it), and one they do not
// acknowledge is an error. ids not one per check are an error wrapping
// sluice.ErrInvalidCheck, and nothing is charged.
func (s *Store) ChargeOnce(ctx context.Context, checks []sluice.Check, ids []string) error {
	if len(ids) != len(checks) {
		return fmt.Errorf("redis store: %w: %d checks with %d charge ids", sluice.ErrInvalidCheck, len(checks), len(ids))
	}
	return s.charge(ctx, checks, ids, nil)
}

// charge charges checks under ids (nil: none). taken, if not nil,
// receives per check the units taken, -1 for a charge whose id Redis had
// taken before.
func (s *Store) charge(ctx context.Context, checks []sluice.Check, ids []string, taken []int64) error {
	if err := s.unusable("charge script"); err != nil {
		return err
	}
	ctx, cancel := s.bounded(ctx)
	defer cancel()
	var runs []rueidis.LuaExec
	var idx []int
	for i := range checks {
		c := &checks[i]
		if c.Cost < 0 || c.Limit.Algorithm() == sluice.AlgorithmConcurrency {
			continue
		}
		args, err := appendCheckArgs([]string{s.timeArg(), s.minTTL}, c)
		if err != nil {
			return err
		}
		key := Key(c.Key, c.Limit.ID())
		keys := []string{key}
		if ids != nil && ids[i] != "" {
			keys = append(keys, chargeIDKey(key, ids[i]))
			life := failover.ChargeHorizon(c.Limit).Milliseconds() + chargeIDSlack
			args = append(args, strconv.FormatInt(max(life, chargeIDSlack), 10))
		}
		runs = append(runs, rueidis.LuaExec{Keys: keys, Args: args})
		idx = append(idx, i)
	}
	if len(runs) == 0 {
		return nil
	}
	// One Exec per key, concurrently: ExecMulti would load the script on
	// every node first, a dead one included.
	replies := make([][]rueidis.RedisMessage, len(runs))
	errs := make([]error, len(runs))
	var wg sync.WaitGroup
	sc := s.scripts
	for j, r := range runs {
		wg.Go(func() { replies[j], errs[j] = s.execScript(ctx, sc.charge, sc.chargeSrc, sc.chargeSha, r.Keys, r.Args) })
	}
	wg.Wait()
	for j, msgs := range replies {
		err := errs[j]
		if err == nil && len(msgs) != 2 {
			err = fmt.Errorf("reply of %d entries, want 2", len(msgs))
		}
		var n int64
		if err == nil {
			n, err = msgs[1].AsInt64()
		}
		if err != nil {
			return s.onNode(&checks[idx[j]], s.fail("charge script", err))
		}
		if taken != nil {
			taken[idx[j]] = n
		}
	}
	return nil
}

// chargeIDKey returns the key that records the charge id of the state at
// key: the state's key (and so its hash tag and slot), ":charge:" and the
// id. A limit's ID holds no ":", so it is never a state's key.
func chargeIDKey(key, id string) string { return key + ":charge:" + id }
