package redis

import (
	"context"
	"fmt"
	"sync"

	"github.com/redis/rueidis"

	"github.com/sluice-dev/sluice"
)

// Charge tells Redis of units admitted without it: for each check, it takes
// up to Cost units of the check's limit for its key — as many as the state
// has left now, so it never refuses and never takes more than the limit
// holds — exactly as an admission of that many units now would (a bucket
// loses the tokens, a window or a log counts them now). Checks of
// AlgorithmConcurrency and of cost 0 are skipped. It is what
// failover.Options.Charge asks for: Open's store charges Redis with what
// its local fallback admitted before Redis decides those keys again.
//
// Each key is one charge.lua run, all sent at once (one round trip on a
// standalone server or with Sentinel, one per node on a Cluster), bounded
// by the store's timeout and ctx; taken, if not nil, receives the units
// taken per check. An error wraps sluice.ErrStoreUnavailable as Apply's do;
// some keys may then have been charged. Under WithReplicas each run waits
// for the replicas as an apply run does, and one they do not acknowledge
// is an error.
func (s *Store) Charge(ctx context.Context, checks []sluice.Check) error {
	return s.charge(ctx, checks, nil)
}

func (s *Store) charge(ctx context.Context, checks []sluice.Check, taken []int64) error {
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
		runs = append(runs, rueidis.LuaExec{Keys: []string{Key(c.Key, c.Limit.ID())}, Args: args})
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
