package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/rueidis"

	"github.com/sluice-dev/sluice"
)

// loadLeaseTakeScript builds lease_take.lua with every family, once.
var loadLeaseTakeScript = onceSource("lease_take.lua")

// errTakeSlots is take's answer when its keys lie in several Cluster
// slots, which one script run cannot reach: the caller takes through
// applyAt instead.
var errTakeSlots = errors.New("redis store: a take's keys lie in several Cluster slots")

// take implements leaseBackend: one lease_take.lua run.
func (s *Store) take(ctx context.Context, checks []sluice.Check, want []int64, out []sluice.Status, got []int64) (int64, error) {
	if err := s.unusable("lease take script"); err != nil {
		return 0, err
	}
	keys := make([]string, len(checks))
	for i := range checks {
		keys[i] = Key(checks[i].Key, checks[i].Limit.ID())
	}
	if len(s.groups(keys)) > 1 {
		return 0, errTakeSlots
	}
	sc, err := loadLeaseTakeScript()
	if err != nil {
		return 0, s.fail("lease take script", err)
	}
	ctx, cancel := s.bounded(ctx)
	defer cancel()
	args := make([]string, 2, 2+len(checks)*(checkArgs+1))
	args[0], args[1] = s.timeArg(), s.minTTL
	for i := range checks {
		if args, err = appendCheckArgs(args, &checks[i]); err != nil {
			return 0, err
		}
		args = append(args, strconv.FormatInt(want[i], 10))
	}
	// It decides the call's own cost, as an apply run does: under
	// WithReplicas, a write no replica holds is an error, not a decision.
	msgs, err := s.execScript(ctx, sc.lua, sc.src, sc.sha, keys, args)
	if err != nil {
		return 0, s.fail("lease take script", err)
	}
	g, packed, err := takeReply(msgs, len(checks))
	if err != nil {
		return 0, s.fail("lease take script", err)
	}
	for i := range checks {
		var w [statusWords]int64
		for k := range w {
			w[k] = packedWord(packed, (statusWords+1)*i+k)
		}
		out[i] = statusOf(w, checks[i].Limit.Algorithm())
		got[i] = packedWord(packed, (statusWords+1)*i+statusWords)
	}
	return g, nil
}

// takeReply returns the time and the packed words of a lease_take.lua
// reply for n checks.
func takeReply(msgs []rueidis.RedisMessage, n int) (int64, string, error) {
	if len(msgs) != 2 {
		return 0, "", fmt.Errorf("reply of %d entries, want 2", len(msgs))
	}
	g, err := msgs[0].AsInt64()
	if err != nil {
		return 0, "", err
	}
	packed, err := msgs[1].ToString()
	if err != nil {
		return 0, "", err
	}
	if want := 8 * (statusWords + 1) * n; len(packed) != want {
		return 0, "", fmt.Errorf("reply of %d bytes, want %d", len(packed), want)
	}
	return g, packed, nil
}

// take implements leaseBackend.
func (l *lazy) take(ctx context.Context, checks []sluice.Check, want []int64, out []sluice.Status, got []int64) (int64, error) {
	s, err := l.store()
	if err != nil {
		return 0, err
	}
	return s.take(ctx, checks, want, out, got)
}
