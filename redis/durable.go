package redis

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/redis/rueidis"
)

// DefaultReplicaWait is how long a write waits for its replicas under
// WithReplicas when no wait is given.
const DefaultReplicaWait = 20 * time.Millisecond

// WithReplicas makes every apply script run on a standalone server or with
// Sentinel wait, with WAIT, until n replicas hold its writes, for at most
// wait (DefaultReplicaWait when ≤ 0; at least 1 ms). A run they do not all
// acknowledge in time fails, with an error wrapping
// sluice.ErrStoreUnavailable, so that its calls are decided by the caller's
// failure policy (Open's OnStoreError) instead of by a master whose
// successor may never see them: after a failover, Redis forgets only what
// no replica held, and such a write was reported as an error, never as a
// decision. Its writes stay on the master (the units count there, as a
// refusal would not): it errs on the side of counting twice.
//
// The price is a replication round trip per script run (one run decides a
// whole batch of calls; see BENCHMARKS.md for the decisions per second it
// costs) and the failure of every call while fewer than n replicas are
// connected. n ≤ 0 turns it off, as does a Cluster, where a script run
// decides one slot: configure min-replicas-to-write on its masters instead.
func WithReplicas(n int, wait time.Duration) Option {
	return func(o *options) {
		o.replicas, o.replicaWait = n, wait
	}
}

// durable is a store's WithReplicas setting.
type durable struct {
	replicas int64
	waitMS   int64
}

func newDurable(n int, wait time.Duration) *durable {
	if n <= 0 {
		return nil
	}
	if wait <= 0 {
		wait = DefaultReplicaWait
	}
	return &durable{replicas: int64(n), waitMS: max(wait.Milliseconds(), 1)}
}

// sha1Hex is the SHA-1 of a script's source, as EVALSHA names it.
func sha1Hex(src string) string {
	sum := sha1.Sum([]byte(src))
	return hex.EncodeToString(sum[:])
}

// execApply runs the apply script of families with keys and args, followed
// under WithReplicas by a WAIT on the same connection.
func (s *Store) execApply(ctx context.Context, families int, keys, args []string) ([]rueidis.RedisMessage, error) {
	sc := s.scripts
	return s.execScript(ctx, sc.apply[families], sc.applySrc[families], sc.applySha[families], keys, args)
}

// execScript runs lua (whose source is src, of SHA-1 sha) with keys and
// args, followed under WithReplicas by a WAIT on the same connection: a
// run whose writes fewer replicas than asked acknowledge is an error.
func (s *Store) execScript(ctx context.Context, lua *rueidis.Lua, src, sha string, keys, args []string) ([]rueidis.RedisMessage, error) {
	if s.durable == nil {
		return s.exec(ctx, lua, keys, args).ToArray()
	}
	d := s.durable
	build := func(eval bool) []rueidis.Completed {
		b := s.client.B()
		var run rueidis.Completed
		if eval {
			run = b.Eval().Script(src).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build()
		} else {
			run = b.Evalsha().Sha1(sha).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build()
		}
		return []rueidis.Completed{run, b.Wait().Numreplicas(d.replicas).Timeout(d.waitMS).Build()}
	}
	res := s.doMulti(ctx, func() []rueidis.Completed { return build(false) })
	if err := res[0].Error(); err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
		res = s.doMulti(ctx, func() []rueidis.Completed { return build(true) })
	}
	msgs, err := res[0].ToArray()
	if err != nil {
		return nil, err
	}
	acked, err := res[1].AsInt64()
	if err != nil {
		return nil, fmt.Errorf("WAIT: %w", err)
	}
	if acked < d.replicas {
		return nil, fmt.Errorf("written on the master but held by %d of %d replicas after %d ms (WAIT): not a decision a failover would keep",
			acked, d.replicas, d.waitMS)
	}
	return msgs, nil
}
