package redis

import (
	"context"
	"strconv"

	"github.com/sluice-dev/sluice"
)

// Release implements sluice.Releaser: for each AlgorithmConcurrency check
// with a non-zero lease, it gives back the lease of Cost units stamped
// leases[i] (Status.Lease of the admitting call), so that the units are
// free again before the lease time runs out. Other checks, zero leases and
// leases that have already expired are skipped. Releases of keys in one
// Cluster slot are one script run; an error wraps
// sluice.ErrStoreUnavailable as Apply's do, and leaves the leases to
// expire.
func (s *Store) Release(ctx context.Context, checks []sluice.Check, leases []int64) error {
	if s.scriptsErr != nil {
		return s.fail("release script", s.scriptsErr)
	}
	if s.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.timeout)
		defer cancel()
	}
	var keys []string
	var idx []int
	for i := range checks {
		if i < len(leases) && leases[i] != 0 && checks[i].Limit.Algorithm() == sluice.AlgorithmConcurrency {
			keys = append(keys, Key(checks[i].Key, checks[i].Limit.ID()))
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return nil
	}
	for _, group := range s.groups(keys) {
		gkeys := make([]string, len(group))
		args := make([]string, 0, (checkArgs+1)*len(group))
		for j, g := range group {
			gkeys[j] = keys[g]
			var err error
			if args, err = appendCheckArgs(args, &checks[idx[g]]); err != nil {
				return err
			}
			args = append(args, strconv.FormatInt(leases[idx[g]], 10))
		}
		if err := s.scripts.release.Exec(ctx, s.client, gkeys, args).Error(); err != nil {
			return s.fail("release script", err)
		}
	}
	return nil
}

var _ sluice.Releaser = (*Store)(nil)
