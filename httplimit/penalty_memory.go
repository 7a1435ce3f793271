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

// maxRemembered bounds the clients each memory of a middleware's penalty
// box (boxMemory, clearMemory) holds; past it, a newly seen client is
// asked about in the store, as without the memory, until room comes back.
const maxRemembered = 1 << 16

// expiringMap holds at most maxRemembered entries by client store key,
// each with the time it expires. Expired entries are swept when a new key
// finds it full, and boxMaxAge after the last sweep. It is safe for
// concurrent use; its zero value is empty.
type expiringMap[V any] struct {
	n     atomic.Int64 // len(m), read without the lock: 0 skips it
	mu    sync.RWMutex
	m     map[string]expiring[V]
	swept time.Time // when m was last rid of expired entries
}

// expiring is an entry of an expiringMap: v, until until.
type expiring[V any] struct {
	until time.Time
	v     V
}

// get returns key's entry, expired or not, and whether there is one.
func (e *expiringMap[V]) get(key string) (expiring[V], bool) {
	if e.n.Load() == 0 {
		return expiring[V]{}, false
	}
	e.mu.RLock()
	x, ok := e.m[key]
	e.mu.RUnlock()
	return x, ok
}

// put makes x key's entry at now, unless the map is full of live entries
// of other keys. With later, an entry of key that expires no sooner stays.
func (e *expiringMap[V]) put(key string, x expiring[V], now time.Time, later bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.m == nil {
		e.m = map[string]expiring[V]{}
	}
	old, ok := e.m[key]
	if later && ok && !x.until.After(old.until) {
		return
	}
	if (!ok && len(e.m) >= maxRemembered) || now.Sub(e.swept) >= boxMaxAge {
		for k, y := range e.m {
			if !now.Before(y.until) {
				delete(e.m, k)
			}
		}
		e.swept = now
	}
	if _, ok := e.m[key]; ok || len(e.m) < maxRemembered {
		e.m[key] = x
	}
	e.n.Store(int64(len(e.m)))
}

// delete removes key's entry.
func (e *expiringMap[V]) delete(key string) {
	if e.n.Load() == 0 {
		return
	}
	e.mu.Lock()
	delete(e.m, key)
	e.n.Store(int64(len(e.m)))
	e.mu.Unlock()
}

// len returns how many entries e holds, expired ones included.
func (e *expiringMap[V]) len() int { return int(e.n.Load()) }

// boxMemory remembers, for the clients the store said were in the penalty
// box, when the box lets them out, so that their requests are refused
// without a store call. It never refuses a client the store has let out
// with time: it stops a little before the end the store stated (the store
// decided after the call was sent, and its clock may run at another rate),
// and after boxMaxAge it asks again. A boxMemory is safe for concurrent
// use; its zero value remembers nothing yet.
type boxMemory struct {
	held expiringMap[time.Time] // until: refuse; v: the box's end, stated
}

// lookup reports the time left in the box of key at now, and whether it
// is remembered; known is whether a box of key is remembered at all, live
// or not.
func (b *boxMemory) lookup(key string, now time.Time) (left time.Duration, live, known bool) {
	h, known := b.held.get(key)
	if !known || !now.Before(h.until) {
		return 0, false, known
	}
	return max(h.v.Sub(now), time.Microsecond), true, true
}

// remember records that the store, asked at sent and answering at
// answered, said key's box holds for left more.
func (b *boxMemory) remember(key string, sent, answered time.Time, left time.Duration) {
	trusted := min(left-time.Microsecond-left/1024, boxMaxAge)
	if trusted <= 0 {
		return
	}
	b.held.put(key, expiring[time.Time]{until: sent.Add(trusted), v: answered.Add(left)}, answered, false)
}

// forget forgets key's box.
func (b *boxMemory) forget(key string) { b.held.delete(key) }

// clearMemory remembers, for the clients the store said were not in the
// penalty box, when the call it said so in was sent, so that for
// boxMaxAge from then their calls are sent without the box's guard and a
// leasing store may decide them from its leases (Options.StoreLeases). A
// box set meanwhile through another instance reaches this one when that
// time is up, at most boxMaxAge after it was set: the store decided after
// the call was sent. A clearMemory is safe for concurrent use; its zero
// value remembers nothing yet.
type clearMemory struct {
	until expiringMap[struct{}] // no guard before until
}

// cleared reports whether key's calls go without the guard at now.
func (c *clearMemory) cleared(key string, now time.Time) bool {
	x, ok := c.until.get(key)
	return ok && now.Before(x.until)
}

// remember records that the store, asked at sent, said key was not in the
// box.
func (c *clearMemory) remember(key string, sent time.Time) {
	c.until.put(key, expiring[struct{}]{until: sent.Add(boxMaxAge)}, sent, true)
}

// forget forgets that key was not in the box: its next call carries the
// guard.
func (c *clearMemory) forget(key string) { c.until.delete(key) }

// timeNow returns the time by the middleware's clock.
func (m *Middleware) timeNow() time.Time {
	if m.now != nil {
		return m.now()
	}
	return m.clock.now()
}
