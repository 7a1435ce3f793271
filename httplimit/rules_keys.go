package httplimit

import (
	"hash/maphash"
	"sync"
)

// Bounds of the rule key cache.
const (
	keyCacheSlots  = 1 << 12
	maxCachedKey   = 192 // bytes; longer keys are allocated for each request
	keyCacheStripe = 64  // slots per lock
)

// keyCache turns the bytes of a rule's store key, built for each request,
// into a string, returning the same string for the same bytes while it is
// remembered: a key met again (a tenant's, a route's) is not allocated
// again. It remembers at most keyCacheSlots keys of at most maxCachedKey
// bytes, one per slot chosen by a seeded hash of the key; a new key replaces
// the slot's. Its size never grows: a flood of distinct keys only replaces
// entries. A key is compared only with the entry of its slot whose 64-bit
// hash equals its own. It is safe for concurrent use.
type keyCache struct {
	seed  maphash.Seed
	locks [keyCacheSlots / keyCacheStripe]sync.Mutex
	slots [keyCacheSlots]keySlot
}

type keySlot struct {
	hash uint64
	key  string
}

func newKeyCache() *keyCache { return &keyCache{seed: maphash.MakeSeed()} }

// key returns b as a string: the remembered one when b was seen before.
func (c *keyCache) key(b []byte) string {
	if len(b) > maxCachedKey {
		return string(b)
	}
	h := maphash.Bytes(c.seed, b)
	i := h % keyCacheSlots
	mu, sl := &c.locks[i/keyCacheStripe], &c.slots[i]
	mu.Lock()
	defer mu.Unlock()
	if sl.hash == h && sl.key == string(b) {
		return sl.key
	}
	sl.hash, sl.key = h, string(b)
	return sl.key
}
