package redis

import "testing"

// Losses.Evicted counts the keys the masters evicted since the store first
// saw them. A master's evicted_keys that reads lower than before (the
// master restarted, or CONFIG RESETSTAT cleared it) holds the evictions
// since that reset: they are counted, and logged with the others.
func TestEvictionsAfterACounterResetAreCounted(t *testing.T) {
	var w watcher
	read := func(n string) {
		w.observeMemory("127.0.0.1:6379", map[string]string{"role": "master", "evicted_keys": n,
			"maxmemory": "1000000", "maxmemory_policy": "allkeys-lru"})
	}
	read("0")
	read("10")
	read("4") // restarted (or CONFIG RESETSTAT), 4 evicted since
	read("6") // 2 more
	if got := w.losses().Evicted; got != 16 {
		t.Errorf("Losses.Evicted = %d after 10 evictions, a reset and 6 more; want 16", got)
	}
	if got := w.memory.unlogged; got != 16 {
		t.Errorf("%d evictions waiting for the log (none logged without a logger); want 16", got)
	}
}
