package httplimit

import (
	"sync"
	"sync/atomic"
	"time"
)

// boxMaxAge bounds how long a middleware refuses a client from what it
// remembers of the client's box without asking the store again: a client
// let out early through another instance (an operator's reset there) is
// refused here at most this much longer. It is the bound the over-limit
// cache keeps on a remembered refusal for the same reason
// (overlimit.DefaultMaxAge).
const boxMaxAge = time.Second

// maxBoxes bounds the boxes a middleware remembers; past it, a newly boxed
// client is asked about in the store until room comes back.
const maxBoxes = 1 << 16

// boxMemory remembers, for the clients the store said were in the penalty
// box, when the box lets them out, so that their requests are refused
// without a store call. It never refuses a client the store has let out
// with time: it stops a little before the end the store stated (the store
// decided after the call was sent, and its clock may run at another rate),
// and after boxMaxAge it asks again. A boxMemory is safe for concurrent
// use; its zero value remembers nothing yet.
type boxMemory struct {
	n     atomic.Int64 // len(held), read without the lock: 0 skips it
	mu    sync.RWMutex
	held  map[string]boxHeld // by the client's store key
	swept time.Time          // when held was last rid of expired boxes
}

// boxHeld is what the store said of one client's box: refuse before until,
// and state the box's end as retryAt.
type boxHeld struct{ until, retryAt time.Time }

// lookup reports the time left in the box of key at now, and whether it
// is remembered; known is whether a box of key is remembered at all, live
// or not.
func (b *boxMemory) lookup(key string, now time.Time) (left time.Duration, live, known bool) {
	if b.n.Load() == 0 {
		return 0, false, false
	}
	b.mu.RLock()
	h, known := b.held[key]
	b.mu.RUnlock()
	if !known || !now.Before(h.until) {
		return 0, false, known
	}
	return max(h.retryAt.Sub(now), time.Microsecond), true, true
}

// remember records that the store, asked at sent and answering at
// answered, said key's box holds for left more.
func (b *boxMemory) remember(key string, sent, answered time.Time, left time.Duration) {
	trusted := min(left-time.Microsecond-left/1024, boxMaxAge)
	if trusted <= 0 {
		return
	}
	h := boxHeld{until: sent.Add(trusted), retryAt: answered.Add(left)}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.held == nil {
		b.held = map[string]boxHeld{}
	}
	if _, ok := b.held[key]; (!ok && len(b.held) >= maxBoxes) || answered.Sub(b.swept) >= boxMaxAge {
		b.sweep(answered)
	}
	if _, ok := b.held[key]; ok || len(b.held) < maxBoxes {
		b.held[key] = h
	}
	b.n.Store(int64(len(b.held)))
}

// sweep forgets the boxes no longer trusted at now; b.mu is held.
func (b *boxMemory) sweep(now time.Time) {
	for k, h := range b.held {
		if !now.Before(h.until) {
			delete(b.held, k)
		}
	}
	b.swept = now
}

// forget forgets key's box.
func (b *boxMemory) forget(key string) {
	if b.n.Load() == 0 {
		return
	}
	b.mu.Lock()
	delete(b.held, key)
	b.n.Store(int64(len(b.held)))
	b.mu.Unlock()
}

// maxCleared bounds the clients a middleware remembers the store said were
// not in the box (clearMemory); past it, a newly seen client's calls carry
// the box's guard, as without Options.StoreLeases, until room comes back.
const maxCleared = 1 << 16

// clearMemory remembers, for the clients the store said were not in the
// penalty box, when the call it said so in was sent, so that for
// boxMaxAge from then their calls are sent without the box's guard and a
// leasing store may decide them from its leases (Options.StoreLeases). A
// box set meanwhile through another instance reaches this one when that
// time is up, at most boxMaxAge after it was set: the store decided after
// the call was sent. A clearMemory is safe for concurrent use; its zero
// value remembers nothing yet.
type clearMemory struct {
	mu    sync.RWMutex
	until map[string]time.Time // by the client's store key: no guard before
	swept time.Time            // when until was last rid of expired entries
}

// cleared reports whether key's calls go without the guard at now.
func (c *clearMemory) cleared(key string, now time.Time) bool {
	c.mu.RLock()
	until, ok := c.until[key]
	c.mu.RUnlock()
	return ok && now.Before(until)
}

// remember records that the store, asked at sent, said key was not in the
// box.
func (c *clearMemory) remember(key string, sent time.Time) {
	until := sent.Add(boxMaxAge)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.until == nil {
		c.until = map[string]time.Time{}
	}
	old, ok := c.until[key]
	if ok && !until.After(old) {
		return
	}
	if (!ok && len(c.until) >= maxCleared) || sent.Sub(c.swept) >= boxMaxAge {
		for k, u := range c.until {
			if !sent.Before(u) {
				delete(c.until, k)
			}
		}
		c.swept = sent
	}
	if _, ok := c.until[key]; ok || len(c.until) < maxCleared {
		c.until[key] = until
	}
}

// forget forgets that key was not in the box: its next call carries the
// guard.
func (c *clearMemory) forget(key string) {
	c.mu.Lock()
	delete(c.until, key)
	c.mu.Unlock()
}

// timeNow returns the time by the middleware's clock.
func (m *Middleware) timeNow() time.Time {
	if m.now != nil {
		return m.now()
	}
	return m.clock.now()
}
