package redis

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/redis/rueidis"

	"github.com/sluice-dev/sluice"
)

// DefaultBatchRuns is how many apply scripts a Store keeps in flight at
// once before it starts to batch calls (see WithBatching).
const DefaultBatchRuns = 2

// maxBatchChecks bounds the checks of one batched script run, so that one
// run never holds Redis for long (about 1 ms at a few µs per check).
const maxBatchChecks = 256

// call is the part of one Apply that one apply.lua run decides: the checks
// idx of checks, all in one slot.
type call struct {
	checks []sluice.Check
	keys   []string
	idx    []int
	out    []sluice.Status

	// The outcome, set by the run that decides the call.
	now     int64
	refused bool     // an enforcing check was refused
	undo    []string // mode reserve: per check mark, dump, expiry; then the run's time
	err     error

	// Batching: done receives one signal when the call is decided, or when
	// it must lead the run of batch (a buffered channel of one, so that a
	// pooled call reuses it). deadline is when the store gives up on it:
	// with a store timeout, that timeout after it started, whatever its
	// context's deadline; without one, its context's deadline (zero:
	// none). expired reports whether it was failed unsent for lack of time
	// before that deadline (see expire).
	done     chan struct{}
	batch    []*call
	deadline time.Time
	expired  bool

	keyBuf [4]string // keys and idx of a call of up to 4 checks
	idxBuf [4]int
}

// callPool recycles the calls of Apply's one-slot path (see release).
var callPool = sync.Pool{New: func() any { return &call{done: make(chan struct{}, 1)} }}

// newCall prepares the checks idx of checks (all in one slot), whose keys
// are keys, for a script run, validating them (decidable). Nil keys and idx
// mean every check, keys made here (in the call itself for a few checks:
// no allocation but the keys' text for a pooled call).
func newCall(checks []sluice.Check, keys []string, idx []int, out []sluice.Status) (*call, error) {
	c := callPool.Get().(*call)
	c.checks, c.keys, c.idx, c.out = checks, keys, idx, out
	if idx == nil {
		n := len(checks)
		if n <= len(c.keyBuf) {
			c.keys, c.idx = c.keyBuf[:n], c.idxBuf[:n]
		} else {
			c.keys, c.idx = make([]string, n), make([]int, n)
		}
		for i := range checks {
			c.keys[i], c.idx[i] = Key(checks[i].Key, checks[i].Limit.ID()), i
		}
	}
	for _, i := range c.idx {
		if err := decidable(&checks[i]); err != nil {
			c.release()
			return nil, err
		}
	}
	return c, nil
}

// release returns c to the pool once its caller has read its outcome. No
// one else may hold c then: a run's leader signals a call of its batch
// last thing, and a call's own caller releases it.
func (c *call) release() {
	done := c.done
	clear(c.keyBuf[:])
	*c = call{done: done}
	callPool.Put(c)
}

// runCalls decides calls with one apply.lua run in mode (with token for a
// reservation), setting each call's outcome. A failure of the run as a
// whole is every call's error.
func (s *Store) runCalls(ctx context.Context, mode, token string, calls []*call) {
	nkeys := 0
	for _, c := range calls {
		nkeys += len(c.idx)
	}
	var limits []*sluice.Limit // distinct, in order of first use
	keys := make([]string, 0, nkeys)
	refs := make([]string, 0, 1+len(calls)+2*nkeys) // the calls' part of ARGV
	// When every call has one check, the count of calls is negative and
	// the calls' counts of checks are left out (see apply.lua).
	single := nkeys == len(calls)
	for _, c := range calls {
		single = single && len(c.idx) == 1
	}
	if single {
		refs = append(refs, itoa(-len(calls)))
	} else {
		refs = append(refs, itoa(len(calls)))
	}
	families := 0
	for _, c := range calls {
		if !single {
			refs = append(refs, itoa(len(c.idx)))
		}
		for _, i := range c.idx {
			l := &c.checks[i].Limit
			ref := slices.IndexFunc(limits, func(m *sluice.Limit) bool { return *m == *l })
			if ref < 0 {
				ref = len(limits)
				limits = append(limits, l)
				families |= family(l.Algorithm())
			}
			keys = append(keys, c.keys[i])
			refs = append(refs, itoa(ref+1), strconv.FormatInt(c.checks[i].Cost, 10))
		}
	}
	args := make([]string, 0, 5+limitArgs*len(limits)+len(refs))
	args = append(args, s.timeArg(), s.minTTL, mode, token, itoa(len(limits)))
	for _, l := range limits {
		args = appendLimitArgs(args, l)
	}
	args = append(args, refs...)
	msgs, err := s.execApply(ctx, families, keys, args)
	if err == nil {
		err = s.readCalls(msgs, mode, calls)
	}
	if err != nil {
		err = s.fail("apply script", err)
		for _, c := range calls {
			c.err = err
		}
	}
}

// readCalls sets the outcome of every call from an apply.lua reply: the
// time, the calls' words packed as little-endian doubles, then the error
// texts and undo words (see lua/apply.lua). An error is a reply that does
// not have the expected shape.
func (s *Store) readCalls(msgs []rueidis.RedisMessage, mode string, calls []*call) error {
	if len(msgs) < 2 {
		return fmt.Errorf("reply of %d entries, want at least 2", len(msgs))
	}
	now, err := msgs[0].AsInt64()
	if err != nil {
		return err
	}
	packed, err := msgs[1].ToString()
	if err != nil {
		return fmt.Errorf("reply's packed words: %w", err)
	}
	if len(packed)%8 != 0 {
		return fmt.Errorf("reply's packed words: %d bytes, not a whole number of words", len(packed))
	}
	words := len(packed) / 8
	pos, extra := 0, 2 // the next packed word, the next entry after them
	for _, c := range calls {
		c.now = now
		if len(c.idx) == 0 {
			continue // no checks, no words
		}
		if pos >= words {
			return fmt.Errorf("reply of %d words, too short for %d calls", words, len(calls))
		}
		if packedWord(packed, pos) < 0 { // the call failed: its error text follows
			if extra >= len(msgs) {
				return fmt.Errorf("reply of %d entries lacks an error text", len(msgs))
			}
			text, err := msgs[extra].ToString()
			if err != nil {
				return fmt.Errorf("reply entry %d: %w", extra, err)
			}
			c.err = s.fail("apply script", errors.New(text))
			pos, extra = pos+1, extra+1
			continue
		}
		n := len(c.idx)
		if words-pos < statusWords*n {
			return fmt.Errorf("reply of %d words, want at least %d", words, pos+statusWords*n)
		}
		for j, i := range c.idx {
			var w [statusWords]int64
			for k := range w {
				w[k] = packedWord(packed, pos+statusWords*j+k)
			}
			c.out[i] = statusOf(w, c.checks[i].Limit.Algorithm())
			if !c.out[i].Allowed && !c.checks[i].Limit.Shadow() {
				c.refused = true
			}
		}
		pos += statusWords * n
		if mode == modeReserve {
			if len(msgs)-extra < 3*n {
				return fmt.Errorf("reply of %d entries, want at least %d", len(msgs), extra+3*n)
			}
			c.undo = make([]string, 3*n, 3*n+1)
			for j := range c.undo {
				if c.undo[j], err = undoWord(msgs[extra+j]); err != nil {
					return err
				}
			}
			c.undo = append(c.undo, strconv.FormatInt(now, 10))
			extra += 3 * n
		}
	}
	if pos != words || extra != len(msgs) {
		return fmt.Errorf("reply of %d words and %d entries, want %d and %d", words, len(msgs), pos, extra)
	}
	return nil
}

// packedWord returns word i of packed, a little-endian double holding an
// integer (exact: the scripts' numbers stay below 2^53).
func packedWord(packed string, i int) int64 {
	b := packed[8*i : 8*i+8]
	bits := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
	return int64(math.Float64frombits(bits))
}

// batcher coalesces concurrent calls into apply.lua runs (group commit). A
// call that finds fewer than runs scripts in flight is sent at once,
// together with every call waiting; one that finds runs in flight waits,
// and the first run to finish hands the waiting calls, as one batch, to the
// first of them to send. A lone caller thus never waits for a batch, while
// under load each script run decides many calls: Redis pays its
// per-command and per-script costs once per batch instead of once per call.
type batcher struct {
	mu      sync.Mutex
	queue   []*call
	running int
	runs    int
}

// apply decides c, possibly in one run with other calls, within the
// store's timeout. It makes no context or timer of its own (one per call
// would cost more CPU than the batching saves). A call's context bounds
// that call alone, never the run it shares with others: a call alone in
// its run is bounded by its context as if it were not batched; a run of
// several calls ends by the earliest store deadline of its calls (see
// lead), and a call queued behind it that is left less than a quarter of
// the store's timeout when it ends is failed unsent (see expire), so that
// a call returns by its store deadline: the calls of the run ahead of it
// started before it, and their store deadlines come no later than its
// own. A call whose context ends while it waits returns the context's
// error and consumes nothing; one whose context ends while its run of
// several calls is in flight returns when that run ends, its store
// deadline at the latest. So does a lone call that meets one of the
// client's connections not yet made: rueidis makes it, handshake
// included, under that call's deadline, not its cancellation, and every
// call waiting for that connection gets that handshake's outcome; a call
// failed so because the call making the connection gave up is sent again
// while its own time lasts (see connector and unsent).
func (b *batcher) apply(ctx context.Context, s *Store, c *call) error {
	if ctx.Err() != nil {
		return s.failCtx("apply script", ctx)
	}
	if s.timeout > 0 {
		c.deadline = time.Now().Add(s.timeout)
	} else {
		c.deadline, _ = ctx.Deadline()
	}
	b.mu.Lock()
	if b.running < b.runs {
		b.running++
		batch := b.take(c)
		b.mu.Unlock()
		return b.lead(ctx, s, batch, c)
	}
	b.queue = append(b.queue, c)
	b.mu.Unlock()
	select {
	case <-c.done:
	case <-ctx.Done():
		b.mu.Lock()
		for i, q := range b.queue {
			if q == c { // not sent yet: it consumes nothing
				b.queue = append(b.queue[:i], b.queue[i+1:]...)
				b.mu.Unlock()
				return s.failCtx("waiting for a batch", ctx)
			}
		}
		b.mu.Unlock()
		<-c.done // on its way: its run ends by its store deadline (see lead)
	}
	if c.batch != nil {
		return b.lead(ctx, s, c.batch, c)
	}
	if c.expired {
		return s.fail("waiting for a batch", context.DeadlineExceeded)
	}
	return c.err
}

// expire fails the queued calls whose deadline is less than left away:
// they consume nothing. The caller holds b.mu; the store has a timeout, so
// that every deadline is a store deadline, never a context's.
func (b *batcher) expire(left time.Duration) {
	now := time.Now().Add(left)
	kept := b.queue[:0]
	for _, c := range b.queue {
		if !now.Before(c.deadline) {
			c.expired = true
			c.done <- struct{}{}
			continue
		}
		kept = append(kept, c)
	}
	clear(b.queue[len(kept):])
	b.queue = kept
}

// take removes the waiting calls that fit in one run from the queue and
// returns them, followed by c if not nil. The caller holds b.mu.
func (b *batcher) take(c *call) []*call {
	n, checks := 0, 0
	if c != nil {
		checks = len(c.idx)
	}
	for n < len(b.queue) && (n == 0 && c == nil || checks+len(b.queue[n].idx) <= maxBatchChecks) {
		checks += len(b.queue[n].idx)
		n++
	}
	batch := make([]*call, 0, n+1)
	batch = append(batch, b.queue[:n]...)
	if c != nil {
		batch = append(batch, c)
	}
	rest := copy(b.queue, b.queue[n:])
	clear(b.queue[rest:])
	b.queue = b.queue[:rest]
	return batch
}

// lead runs batch, which includes self, wakes its other calls, and hands
// the calls that queued meanwhile to the next leader. A leader whose
// context ended while it queued is left out of the run, unsent. Alone in
// its run, self is bounded by its context and its store deadline, as a
// call that is not batched. A run of several calls decides every one of
// them, so no caller's context ends it, nor bounds it: one caller's short
// deadline would fail the others' calls, as errors of the store. With a
// store timeout every call has a store deadline, its Timeout after it
// started, and the run ends by the earliest of them, so that no call
// returns past its own: a call that waited for the batch has less time
// left than one that just came, and a run bounded by a Timeout of its own
// would outlast it. Without one, it is bounded by the latest context
// deadline of its calls (none if one of them has none), so that a call
// whose context ends during the run never waits longer than the most
// patient call of its batch.
func (b *batcher) lead(ctx context.Context, s *Store, batch []*call, self *call) error {
	if ctx.Err() != nil {
		self.err = s.failCtx("waiting for a batch", ctx)
		i := slices.Index(batch, self)
		batch = slices.Delete(batch, i, i+1)
	}
	var rctx context.Context
	var cancel context.CancelFunc = func() {}
	switch {
	case len(batch) == 0:
	case len(batch) == 1 && batch[0] == self:
		rctx = ctx
		if s.timeout > 0 {
			rctx, cancel = context.WithDeadline(ctx, self.deadline)
		}
	case s.timeout > 0:
		rctx, cancel = context.WithDeadline(context.WithoutCancel(ctx), earliestDeadline(batch))
	default:
		rctx = context.WithoutCancel(ctx)
		if last, ok := latestDeadline(batch); ok {
			rctx, cancel = context.WithDeadline(rctx, last)
		}
	}
	if len(batch) > 0 {
		s.runCalls(rctx, modeApply, "", batch)
	}
	cancel()
	// Hand the queue over first: Redis idles until the next run arrives.
	// A call with less than a quarter of the store's timeout left is not
	// sent: the next run ends by its deadline, too soon for most answers,
	// and a script sent then may still be decided after the call failed.
	// Without a store timeout a queued call leaves when its context ends.
	b.mu.Lock()
	if s.timeout > 0 {
		b.expire(s.timeout / 4)
	}
	if len(b.queue) == 0 {
		b.running--
		b.mu.Unlock()
	} else {
		next := b.queue[0]
		next.batch = b.take(nil)
		b.mu.Unlock()
		next.done <- struct{}{}
	}
	for _, c := range batch {
		if c != self {
			c.done <- struct{}{}
		}
	}
	return self.err
}

// earliestDeadline returns the earliest deadline of calls, each of which
// has one.
func earliestDeadline(calls []*call) time.Time {
	first := calls[0].deadline
	for _, c := range calls[1:] {
		if c.deadline.Before(first) {
			first = c.deadline
		}
	}
	return first
}

// latestDeadline returns the latest deadline of calls, and false if one of
// them has none.
func latestDeadline(calls []*call) (time.Time, bool) {
	var last time.Time
	for _, c := range calls {
		if c.deadline.IsZero() {
			return time.Time{}, false
		}
		if c.deadline.After(last) {
			last = c.deadline
		}
	}
	return last, true
}
