package failover

import (
	"hash/maphash"
	"sync"
	"time"

	"github.com/sluice-dev/sluice"
)

// DefaultRemember is how many keys' last remaining counts a Store keeps at
// most unless Options.Remember says otherwise.
const DefaultRemember = 1 << 16

// A stateKey names the state of one limit of one subject, as the stores
// keep it: the check's key and its limit's name.
type stateKey struct{ key, name string }

// lastWord is what the primary last said of one key: how much it had left of
// a limit of that burst, and until when that holds at most (the answer's
// time plus its ResetAfter: by then the limit is full again). started is
// true once the fallback has started on the key from it (see start).
type lastWord struct {
	remaining, burst int64
	until            time.Time
	started          bool
}

// memoShards is the number of independently locked parts of a memo.
const memoShards = 16

// A memo keeps the primary's last word per key, bounded: a full shard
// forgets an arbitrary entry to make room. Forgetting is safe: a key with
// no last word falls back to its whole share.
type memo struct {
	seed   maphash.Seed
	per    int // entries per shard
	shards [memoShards]struct {
		mu sync.Mutex
		m  map[stateKey]lastWord
	}
}

func newMemo(max int) *memo {
	if max <= 0 {
		max = DefaultRemember
	}
	return &memo{seed: maphash.MakeSeed(), per: max/memoShards + 1}
}

func (m *memo) shard(k stateKey) int {
	return int((maphash.String(m.seed, k.key) ^ maphash.String(m.seed, k.name)) % memoShards)
}

// put remembers out, the primary's statuses for checks, answered at now.
func (m *memo) put(checks []sluice.Check, out []sluice.Status, now time.Time) {
	for i := range checks {
		c, st := &checks[i], &out[i]
		k := stateKey{c.Key, c.Limit.ID()}
		s := &m.shards[m.shard(k)]
		s.mu.Lock()
		if st.ResetAfter <= 0 {
			delete(s.m, k) // full: nothing to remember
		} else {
			if s.m == nil {
				s.m = make(map[stateKey]lastWord)
			}
			if _, ok := s.m[k]; !ok && len(s.m) >= m.per {
				for old := range s.m {
					delete(s.m, old)
					break
				}
			}
			s.m[k] = lastWord{remaining: st.Remaining, burst: c.Limit.Burst(), until: now.Add(st.ResetAfter)}
		}
		s.mu.Unlock()
	}
}

// start returns the last word on c's key and limit if it still holds at
// now, was said of a limit of c's burst and no fallback has started from it
// yet, and records that one has: a fallback starts from each word once,
// and a state it has decided on since is its own (lowered by what it
// admitted, refilled by its own clock). A new word from the primary (put)
// can be started from again.
func (m *memo) start(c *sluice.Check, now time.Time) (lastWord, bool) {
	k := stateKey{c.Key, c.Limit.ID()}
	s := &m.shards[m.shard(k)]
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.m[k]
	if !ok || w.started || w.burst != c.Limit.Burst() || !now.Before(w.until) {
		return lastWord{}, false
	}
	w.started = true
	s.m[k] = w
	return w, true
}
