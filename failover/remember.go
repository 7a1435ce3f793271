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

// lastWord is what the primary last said of one key: how much it had left
// of limit at the answer's time at, and until when that holds at most (at
// plus the answer's ResetAfter: by then the limit is full again). decided
// is the primary's time of the decision, in µs since sluice.Epoch by the
// primary's clock, when the answer told it (0: unknown). started is true
// once the fallback has started on the key from it (see start).
type lastWord struct {
	limit     sluice.Limit
	remaining int64
	at, until time.Time
	decided   int64
	started   bool
}

// after reports whether an answer of limit that the primary decided at
// decided (0: unknown), to a call sent at sent (zero: unknown) and answered
// at now, leaving remaining (full: nothing used), supersedes w: only an
// answer known to be of a later decision may say more is left than w. An
// answer is known to be later where both decision times are known and
// its is the greater, or where its call was sent once w had arrived. Any
// other answer is of unknown order: decision times come from the clock of
// whichever server decided, which may be behind the one that decided w
// (a failover), so an earlier one is no proof of an earlier decision. An
// answer of unknown order supersedes w only if it leaves no more than w
// does, the two read under limit (see under; w said of other parameters
// of the same state, a reload, is read under the answer's): a stale
// higher remainder is never kept over a lower one unless the lower is
// known to be older. A full answer of unknown order never does. A word
// that no longer holds at now, or one of another algorithm (of which limit
// reads nothing), is superseded by any answer.
func (w *lastWord) after(limit sluice.Limit, remaining int64, full bool, decided int64, sent, now time.Time) bool {
	switch {
	case !now.Before(w.until):
		return true
	case decided != 0 && w.decided != 0 && decided > w.decided:
		return true
	case !sent.IsZero() && !sent.Before(w.at):
		return true
	}
	u, ok := w.under(limit)
	return !ok || !full && remaining <= u.remaining
}

// measures reports whether st measures the key's use: not a refusal for
// want of room, an Unavailable status (no store decided it) or an
// Undecided one (nothing did), whose Remaining and ResetAfter tell
// nothing of it.
func measures(st *sluice.Status) bool {
	return !st.NoRoom && !st.Unavailable && !st.Undecided
}

// memoShards is the most independently locked parts a memo has.
const memoShards = 16

// A memo keeps the primary's last word per key, bounded: a full shard
// forgets an arbitrary entry to make room. Forgetting is safe: a key with
// no last word falls back to its whole share.
type memo struct {
	seed   maphash.Seed
	mask   uint64 // the shards in use, a power of two, less one
	per    int    // entries per shard in use
	shards [memoShards]struct {
		mu sync.Mutex
		m  map[stateKey]lastWord
	}
}

// newMemo returns a memo of at most max entries (DefaultRemember when
// max ≤ 0): each shard in use holds max divided by their number, rounded
// down, with fewer shards when that would be below 16, so that together
// they never hold more than max.
func newMemo(max int) *memo {
	if max <= 0 {
		max = DefaultRemember
	}
	n := memoShards
	for n > 1 && max/n < 16 {
		n /= 2
	}
	return &memo{seed: maphash.MakeSeed(), mask: uint64(n - 1), per: max / n}
}

func (m *memo) shard(k stateKey) int {
	return int((maphash.String(m.seed, k.key) ^ maphash.String(m.seed, k.name)) & m.mask)
}

// put remembers out, the primary's statuses for checks, of a call sent at
// sent (zero: unknown) and answered at now, where they supersede the word
// kept on a key (see lastWord.after). decided, when not nil, holds the
// primary's time of each check's decision (see lastWord; 0: unknown). A
// status that measures nothing of the key's use (see measures) leaves the
// word kept as it is.
func (m *memo) put(checks []sluice.Check, out []sluice.Status, decided []int64, sent, now time.Time) {
	for i := range checks {
		c, st := &checks[i], &out[i]
		if !measures(st) {
			continue
		}
		k := stateKey{c.Key, c.Limit.ID()}
		var d int64
		if decided != nil {
			d = decided[i]
		}
		s := &m.shards[m.shard(k)]
		s.mu.Lock()
		w, kept := s.m[k]
		switch {
		case kept && !w.after(c.Limit, st.Remaining, st.ResetAfter <= 0, d, sent, now):
			// The word kept may have been decided later, and leaves less.
		case st.ResetAfter <= 0: // full: nothing to remember
			delete(s.m, k)
		default:
			if s.m == nil {
				s.m = make(map[stateKey]lastWord)
			}
			if _, ok := s.m[k]; !ok && len(s.m) >= m.per {
				for old := range s.m {
					delete(s.m, old)
					break
				}
			}
			s.m[k] = lastWord{limit: c.Limit, remaining: st.Remaining, at: now, until: now.Add(st.ResetAfter), decided: d}
		}
		s.mu.Unlock()
	}
}

// start returns the last word on c's key and limit if it still holds at
// now and no fallback has started from it yet, and records that one has: a
// fallback starts from each word once, and a state it has decided on since
// is its own (lowered by what it admitted, refilled by its own clock). A
// new word from the primary (put) can be started from again. A word said
// of other parameters of the limit (a reload that changed it under the
// same ID, so the same state) is returned as said of c's (see under).
func (m *memo) start(c *sluice.Check, now time.Time) (lastWord, bool) {
	k := stateKey{c.Key, c.Limit.ID()}
	s := &m.shards[m.shard(k)]
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.m[k]
	if !ok || w.started {
		return lastWord{}, false
	}
	u, ok := w.under(c.Limit)
	if !ok || !now.Before(u.until) {
		return lastWord{}, false
	}
	w.started = true
	s.m[k] = w
	return u, true
}

// unstart records that no fallback has started from the last word on c's
// key and limit, if one is kept: one that start returned and that the
// fallback could not start from (the local store had no room for the
// key's state), to be started from by the next call that meets the key.
func (m *memo) unstart(c *sluice.Check) {
	k := stateKey{c.Key, c.Limit.ID()}
	s := &m.shards[m.shard(k)]
	s.mu.Lock()
	defer s.mu.Unlock()
	if w, ok := s.m[k]; ok && w.started {
		w.started = false
		s.m[k] = w
	}
}

// under returns w as said of limit, a limit under w's limit's ID, so of
// the same state, with perhaps other parameters (a reload changed them):
// the primary reads that state under limit's, as every store reads a
// state written under others. What w's limit had used at w.at (its burst
// less what was left) is spent at once at w.at from a state never seen,
// and limit reads that state at w.at. For a fixed window it is the state
// the primary holds. For the others it counts every unit the primary's
// counts and lets none of them go sooner (the primary's were spent at
// w.at or before), so limit reads in it at most what the primary has left,
// and full no sooner: erring on the side of refusing. It reports false for
// a limit of another algorithm, whose state the primary starts afresh: w
// says nothing of it.
func (w lastWord) under(limit sluice.Limit) (lastWord, bool) {
	switch {
	case w.limit == limit:
		return w, true
	case w.limit.Algorithm() != limit.Algorithm():
		return lastWord{}, false
	}
	t := sluice.MicrosSinceEpoch(w.at)
	used := max(w.limit.Burst()-w.remaining, 0)
	s, st, err := w.limit.Decide(sluice.State{}, t, used)
	if err == nil && st.Allowed {
		_, st, err = limit.Decide(s, t, 0)
	}
	if err != nil || !st.Allowed { // used ≤ its burst, never refused; else nothing left
		st = sluice.Status{ResetAfter: w.until.Sub(w.at)}
	}
	w.limit, w.remaining, w.until = limit, st.Remaining, w.at.Add(st.ResetAfter)
	return w, true
}
