package failover

import "github.com/sluice-dev/sluice"

// Forget drops what f keeps of key's states under limits: the primary's
// last word on them, which would bring a fallback on key down to its share
// of what was left, and the units admitted locally and not yet charged to
// the primary, which would be charged to it later. Call it when the
// primary's states of key are reset (redis.Guarded.Reset does), so that
// neither outlives the reset. A charge already on its way to the primary
// is not recalled. Forget is safe for concurrent use; with a policy other
// than Local it does nothing.
func (f *Store) Forget(key string, limits []sluice.Limit) {
	if f.memo == nil {
		return
	}
	for _, l := range limits {
		k := stateKey{key, l.ID()}
		f.memo.forget(k)
		f.ledger.forget(k)
	}
}

// forget drops the last word on k.
func (m *memo) forget(k stateKey) {
	s := &m.shards[m.shard(k)]
	s.mu.Lock()
	delete(s.m, k)
	s.mu.Unlock()
}

// forget closes k's account: an account no call is charging is dropped;
// one being charged keeps what that call settles and nothing admitted
// since, so that it closes when the charge ends.
func (lg *ledger) forget(k stateKey) {
	lg.mu.Lock()
	defer lg.mu.Unlock()
	a := lg.m[k]
	switch {
	case a == nil:
	case a.busy != nil:
		a.admitted, a.from = a.charged, 0
	default:
		delete(lg.m, k)
		lg.size.Add(-1)
	}
}
