package redis

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/rueidis"
	"github.com/sluice-dev/sluice"
)

// stamped runs script (release.lua or refund_charge.lua) once per Cluster
// slot over the checks with a non-zero stamps[i] whose algorithm is
// picked, each as its CHECK_ARGS and its stamp, within the store's timeout;
// what names the script in errors, which wrap sluice.ErrStoreUnavailable
// and leave the slots not reached as they were. With resets, the keys of
// a run are followed by each state's reset key (see Store.Reset), in the
// state's slot. Stamps not one per check, or a
// picked check whose limit cannot be decided, run nothing: the error
// wraps sluice.ErrInvalidCheck.
func (s *Store) stamped(ctx context.Context, script *rueidis.Lua, what string, checks []sluice.Check, stamps []int64,
	picked func(sluice.Algorithm) bool, resets bool) error {
	if len(stamps) != len(checks) {
		return fmt.Errorf("redis store: %s: %w: %d checks with %d stamps", what, sluice.ErrInvalidCheck, len(checks), len(stamps))
	}
	var keys []string
	var idx []int
	for i := range checks {
		if stamps[i] != 0 && picked(checks[i].Limit.Algorithm()) {
			if err := validateCheck(&checks[i]); err != nil {
				return err
			}
			keys = append(keys, Key(checks[i].Key, checks[i].Limit.ID()))
			idx = append(idx, i)
		}
	}
	ctx, cancel := s.bounded(ctx)
	defer cancel()
	for _, group := range s.groups(keys) {
		gkeys := make([]string, len(group), 2*len(group))
		args := make([]string, 0, (checkArgs+1)*len(group))
		for j, g := range group {
			gkeys[j] = keys[g]
			var err error
			if args, err = appendCheckArgs(args, &checks[idx[g]]); err != nil {
				return err
			}
			args = append(args, strconv.FormatInt(stamps[idx[g]], 10))
			if resets {
				gkeys = append(gkeys, resetKey(keys[g]))
			}
		}
		if err := s.exec(ctx, script, gkeys, args).Error(); err != nil {
			return s.fail(what, err)
		}
	}
	return nil
}
