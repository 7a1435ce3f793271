package redis

import (
	"fmt"
	"strconv"
	"sync/atomic"
	"time"
)

// maxWatchedNodes bounds the nodes a memoryWatch remembers.
const maxWatchedNodes = 256

// evictionLogEvery is the least time between two logs of evictions.
const evictionLogEvery = time.Minute

// memoryWatch is what the watch knows of each master's evictions: the
// evicted_keys it last reported (a master seen for the first time has its
// policy looked at), and the evictions not logged yet.
type memoryWatch struct {
	evicted  map[string]int64 // by address
	unlogged int64
	logged   time.Time
	// evicting lists the masters that may evict, as "address
	// (maxmemory-policy P, maxmemory N bytes)", for Guarded.Evicting.
	evicting atomic.Pointer[[]string]
	// seen counts the masters read at least once, published when a read
	// of the whole deployment ends: a reader that sees it sees the list
	// of that read.
	seen atomic.Int64
}

// observeMemory reads a master's INFO stats and memory fields: it counts
// the keys the master evicted since it last reported (a count that went
// down — a restarted master's, or one CONFIG RESETSTAT cleared — holds
// only the evictions since it restarted, and counts them all) and logs
// them, at most once every evictionLogEvery; on first sight of the master
// it warns when the master may evict at all: a maxmemory set with a
// maxmemory-policy other than noeviction.
func (w *watcher) observeMemory(addr string, f map[string]string) {
	if f["role"] != "master" {
		return
	}
	n, err := strconv.ParseInt(f["evicted_keys"], 10, 64)
	if err != nil {
		return
	}
	m := &w.memory
	if m.evicted == nil {
		m.evicted = make(map[string]int64)
	}
	prev, seen := m.evicted[addr]
	if !seen && len(m.evicted) >= maxWatchedNodes {
		clear(m.evicted)
	}
	m.evicted[addr] = n
	switch {
	case !seen:
		if limit, policy := f["maxmemory"], f["maxmemory_policy"]; limit != "" && limit != "0" && policy != "" && policy != "noeviction" {
			var list []string
			if old := m.evicting.Load(); old != nil {
				list = append(list, *old...)
			}
			list = append(list, fmt.Sprintf("%s (maxmemory-policy %s, maxmemory %s bytes)", addr, policy, limit))
			m.evicting.Store(&list)
			if w.log == nil {
				break
			}
			w.log.Warn("redis may evict the limits' states when full: an evicted state gives its client a fresh quota; "+
				"give sluice a Redis with maxmemory-policy noeviction (a full Redis then refuses writes, decided by on_store_error)",
				"node", addr, "maxmemory", limit, "maxmemory_policy", policy)
		}
	case n > prev:
		w.evicted.Add(n - prev)
		m.unlogged += n - prev
	case n < prev:
		// The count restarted (a restarted master, CONFIG RESETSTAT): it
		// holds only evictions since then.
		w.evicted.Add(n)
		m.unlogged += n
	}
	if m.unlogged > 0 && w.log != nil && time.Since(m.logged) >= evictionLogEvery {
		w.log.Error("redis evicted keys to make room: the limits' states among them are gone, and their clients get fresh quotas",
			"node", addr, "evicted", m.unlogged, "maxmemory_policy", f["maxmemory_policy"])
		m.unlogged, m.logged = 0, time.Now()
	}
}
