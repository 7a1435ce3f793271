package overlimit

import (
	"strings"

	"github.com/sluice-dev/sluice"
)

// remember stores d for ch's key, making room if the shard is full. It
// replaces the entry for the same limit name if replace is set, and leaves
// it otherwise. sh.mu is held.
func (c *Cache) remember(sh *shard, ch *sluice.Check, now int64, d denial, replace bool) {
	if ds := sh.keys[ch.Key]; ds != nil {
		if j := ds.find(ch.Limit.ID()); j >= 0 {
			if replace {
				ds.list[j] = d
			}
			return
		}
	}
	if sh.n >= c.perShard {
		c.makeRoom(sh, now)
	}
	ds := sh.keys[ch.Key]
	if ds == nil {
		ds = &denials{}
		sh.keys[strings.Clone(ch.Key)] = ds // keep none of the caller's memory
	}
	ds.list = append(ds.list, d)
	sh.n++
}

// evictionSample is how many keys a full shard looks at to make room.
const evictionSample = 8

// sweepSample is how many keys of one shard each call the store answers
// looks at for expired denials.
const sweepSample = 4

// sweep forgets the expired denials among a few keys (a random sample) of
// the next shard in turn, so that what a flood left is given back as the
// calls that follow it reach the store, whatever their keys.
func (c *Cache) sweep(now int64) {
	sh := &c.shards[c.sweeps.Add(1)&c.mask]
	sh.mu.Lock()
	seen := 0
	for key, ds := range sh.keys {
		sh.dropExpired(key, ds, now)
		if seen++; seen == sweepSample {
			break
		}
	}
	sh.mu.Unlock()
}

// makeRoom forgets the expired denials of a few keys (map order is random: a
// random sample) and, if that freed nothing, the one among them that refuses
// nothing (figures kept to state beside a refusal) or, if none, that
// expires soonest. sh.mu is held.
func (c *Cache) makeRoom(sh *shard, now int64) {
	before := sh.n
	var (
		victim    *denials
		victimKey string
		victimJ   int
	)
	seen := 0
	for key, ds := range sh.keys {
		sh.dropExpired(key, ds, now)
		for j := range ds.list {
			if victim == nil || ds.list[j].before(&victim.list[victimJ]) {
				victim, victimKey, victimJ = ds, key, j
			}
		}
		if seen++; seen == evictionSample {
			break
		}
	}
	if sh.n == before && victim != nil {
		sh.remove(victimKey, victim, victimJ)
		c.evictions.Add(1)
	}
}

// before reports whether d is to be forgotten before e: what refuses
// nothing first (it spares the store no round trip), then what expires
// soonest.
func (d *denial) before(e *denial) bool {
	if d.refusesNothing() != e.refusesNothing() {
		return d.refusesNothing()
	}
	return d.until < e.until
}

// refusesNothing reports whether d is kept only to be stated beside a
// refusal: the figures of a check that fitted, a shadow limit's refusal.
func (d *denial) refusesNothing() bool { return d.cost == 0 || d.limit.Shadow() }

// dropExpired forgets the denials of key that have expired at now, and key
// when none is left; ranging over sh.keys, it may be called on the key at
// hand. sh.mu is held.
func (sh *shard) dropExpired(key string, ds *denials, now int64) {
	for j := 0; j < len(ds.list); {
		if ds.list[j].until <= now {
			sh.remove(key, ds, j)
			continue
		}
		j++
	}
}

// find returns the index of the denial for the limit of ID id, or -1.
func (ds *denials) find(id string) int {
	for j := range ds.list {
		if ds.list[j].limit.ID() == id {
			return j
		}
	}
	return -1
}

// remove forgets ds.list[j], and key when it has no denial left. sh.mu is
// held.
func (sh *shard) remove(key string, ds *denials, j int) {
	last := len(ds.list) - 1
	ds.list[j] = ds.list[last]
	ds.list[last] = denial{} // drop the limit's strings
	ds.list = ds.list[:last]
	sh.n--
	if last == 0 {
		delete(sh.keys, key)
	}
}
