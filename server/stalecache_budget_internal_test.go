package server

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"
)

// The stale cache's budget (staleMaxBytes) bounds what its copies hold,
// not only their lengths: a copy keeps its body in a buffer of its
// length, however the buffer it was taken into grew while the proxy wrote
// the answer 32 KiB at a time, and the copies of answers in progress
// count the buffers they grow.
func TestStaleCacheBudgetCountsWhatCopiesHold(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	c := newStaleCache(time.Minute, func() time.Time { return now }, nil, nil)
	c.maxBytes = 8 << 20 // the real staleMaxBytes' 64 MiB behaves alike, 8 times slower
	chunk := make([]byte, 32<<10)
	var growing []int64
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		for range 16 {
			w.Write(chunk)
			tw := w.(*teeWriter)
			if tw.counted != int64(cap(tw.buf)) {
				growing = append(growing, tw.counted-int64(cap(tw.buf)))
			}
		}
		w.Write(chunk[:8<<10]) // 520 KiB in all
	})
	for i := range 20 {
		c.record(up, httptest.NewRecorder(), httptest.NewRequest("GET", "/"+strconv.Itoa(i), nil))
	}
	held := 0
	for _, e := range c.entries {
		held += cap(e.body)
	}
	if held > c.maxBytes {
		t.Errorf("%d copies count %d bytes against the budget of %d, and hold %d bytes of bodies (%.2f×)",
			len(c.entries), c.bytes, c.maxBytes, held, float64(held)/float64(c.maxBytes))
	}
	if len(growing) > 0 {
		t.Errorf("copies in progress counted other than the buffers they held (counted − held: %v)", growing)
	}
	if n := c.copying.Load(); n != 0 {
		t.Errorf("no answer in progress, and %d bytes counted as being copied", n)
	}
}

// Copies older than stale_for are dropped as they expire, not only when
// a new copy is recorded: once an overload has ended and no GET is
// recorded any more, the cache does not hold its copies.
func TestStaleCacheDropsCopiesAsTheyExpire(t *testing.T) {
	ttl := 50 * time.Millisecond
	c := newStaleCache(ttl, time.Now, nil, nil)
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("hello")) })
	for i := range 3 {
		c.record(up, httptest.NewRecorder(), httptest.NewRequest("GET", "/"+strconv.Itoa(i), nil))
	}
	held := func() (n, bytes int) {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.entries), c.bytes
	}
	if n, _ := held(); n != 3 {
		t.Fatalf("%d copies recorded, want 3", n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for n, size := held(); n > 0 || size != 0; n, size = held() {
		if time.Now().After(deadline) {
			t.Fatalf("%d copies (%d bytes) still held 5 s after they expired (stale_for %v)", n, size, ttl)
		}
		time.Sleep(10 * time.Millisecond)
	}
	c.mu.Lock()
	armed := c.armed
	c.mu.Unlock()
	if armed {
		t.Error("an empty cache keeps a timer armed")
	}
}
