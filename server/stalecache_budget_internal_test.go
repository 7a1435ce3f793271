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
	var growing []int
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		for range 16 {
			w.Write(chunk)
			tw := w.(*teeWriter)
			if tw.counted != cap(tw.buf) {
				growing = append(growing, tw.counted-cap(tw.buf))
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
	if n := c.copying; n != 0 {
		t.Errorf("no answer in progress, and %d bytes counted as being copied", n)
	}
}

// The budget bounds the copies kept and the buffers of the copies being
// taken as one (decisions.md: "The 64 MiB budget counts the buffers copies
// hold, and those of copies being taken"): a full cache makes room for the
// answers being copied by dropping its oldest copies, so that it holds at
// most its budget during the overload it serves in, and keeps the freshest
// answers. The budget is scaled down here (1 MiB, 512 KiB a copy); the
// real one behaves alike.
func TestStaleCacheBudgetBoundsCopiesKeptAndBeingTakenAsOne(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	c := newStaleCache(time.Minute, func() time.Time { return now }, nil, nil)
	c.maxBytes, c.maxEntry = 3<<19, 512<<10 // the copies kept hold up to 1 MiB
	body := make([]byte, 500<<10)
	get := func(path string) *http.Request { return httptest.NewRequest("GET", path, nil) }
	plain := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) })
	c.record(plain, httptest.NewRecorder(), get("/a"))
	c.record(plain, httptest.NewRecorder(), get("/b"))
	held := func() int {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.bytes + c.copying
	}
	var most int
	// Two answers being copied at once while the cache is full (a slow
	// upstream: the overload itself), each nested in the other's writing.
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(body)
		most = max(most, held())
	})
	outer := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(body)
		most = max(most, held())
		c.record(inner, httptest.NewRecorder(), get("/d"))
	})
	c.record(outer, httptest.NewRecorder(), get("/c"))
	if most > c.maxBytes {
		t.Errorf("the cache and the copies being taken held %d bytes at once, %.2f× its budget of %d",
			most, float64(most)/float64(c.maxBytes), c.maxBytes)
	}
	// /c, of unknown length, is copied into the room the copies kept leave
	// and, kept, drops the oldest (/a); /d, begun while /c was being
	// copied, finds no room and is not copied: a streamed answer never
	// drops a copy kept before it is kept itself.
	for path, want := range map[string]bool{"/a": false, "/b": true, "/c": true, "/d": false} {
		if got := c.serve(httptest.NewRecorder(), get(path)); got != want {
			t.Errorf("GET %s served from a copy: %v, want %v", path, got, want)
		}
	}
	if c.copying != 0 || c.bytes > c.maxBytes {
		t.Errorf("no answer in progress: %d bytes counted as being copied, %d kept (budget %d)", c.copying, c.bytes, c.maxBytes)
	}
}

// An answer whose Content-Length is more than a copy may hold is not
// copied: it drops none of the copies kept to make room for a copy that
// could never be kept.
func TestStaleCacheDropsNoCopyForAnAnswerTooLargeToKeep(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	c := newStaleCache(time.Minute, func() time.Time { return now }, nil, nil)
	c.maxBytes, c.maxEntry = 3<<19, 512<<10 // the copies kept hold up to 1 MiB
	body := make([]byte, 500<<10)
	get := func(path string) *http.Request { return httptest.NewRequest("GET", path, nil) }
	c.record(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) }), httptest.NewRecorder(), get("/a"))
	c.record(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) }), httptest.NewRecorder(), get("/b"))
	large := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(2*len(body)))
		w.Write(body)
		w.Write(body)
	})
	c.record(large, httptest.NewRecorder(), get("/large"))
	for path, want := range map[string]bool{"/a": true, "/b": true, "/large": false} {
		if got := c.serve(httptest.NewRecorder(), get(path)); got != want {
			t.Errorf("GET %s served from a copy: %v, want %v", path, got, want)
		}
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

// Streamed answers (no Content-Length, as a chunked export or an
// on-the-fly gzip sends) longer than a copy may hold, a few in progress at
// once (the overload the cache records in), drop no copy kept: an answer
// of unknown length is copied only into the room the copies kept leave,
// so one that is then too long to keep has cost the cache nothing.
func TestStreamedAnswersTooLargeToKeepDropNoCopyKept(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	c := newStaleCache(time.Minute, func() time.Time { return now }, nil, nil)
	c.maxBytes, c.maxEntry = 1<<20, 256<<10 // the real 64 MiB / 1 MiB behave alike
	get := func(path string) *http.Request { return httptest.NewRequest("GET", path, nil) }
	small := make([]byte, 60<<10)
	kept := 0
	for i := 0; c.bytes+(60<<10)+staleEntryOverhead <= c.maxBytes-c.maxEntry; i++ {
		c.record(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(small) }), httptest.NewRecorder(), get("/kept/"+strconv.Itoa(i)))
		kept++
	}
	chunk := make([]byte, 32<<10)
	// Four streamed answers in progress at once, each nested in the
	// previous one's writing (deterministic interleaving).
	var streamed func(depth int) http.Handler
	streamed = func(depth int) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			for range 8 { // 256 KiB written so far: the copy grew to maxEntry
				w.Write(chunk)
			}
			if depth < 3 {
				c.record(streamed(depth+1), httptest.NewRecorder(), get("/export/"+strconv.Itoa(depth+1)))
			}
			for range 8 { // 512 KiB in all, more than a copy may hold
				w.Write(chunk)
			}
		})
	}
	c.record(streamed(0), httptest.NewRecorder(), get("/export/0"))
	served := 0
	for i := range kept {
		if c.serve(httptest.NewRecorder(), get("/kept/"+strconv.Itoa(i))) {
			served++
		}
	}
	exports := 0
	for i := range 4 {
		if c.serve(httptest.NewRecorder(), get("/export/"+strconv.Itoa(i))) {
			exports++
		}
	}
	if served < kept {
		t.Errorf("%d copies kept; after 4 streamed answers too long to keep (%d of them kept), %d are left (bytes %d, copying %d): "+
			"each grew a copy that could never be kept by dropping kept ones", kept, exports, served, c.bytes, c.copying)
	}
}

// An answer whose Content-Length is within maxEntry but whose copy, with
// its header fields and staleEntryOverhead, is not (entrySize > maxEntry)
// is not copied, so it drops no copy kept for a copy never kept.
func TestAnAnswerWhoseCopyWithItsHeaderFieldsPassesMaxEntryIsNotCopied(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	c := newStaleCache(time.Minute, func() time.Time { return now }, nil, nil)
	c.maxBytes, c.maxEntry = 3<<19, 512<<10
	exact := make([]byte, c.maxEntry) // Content-Length == maxEntry: with its header fields, more
	copied := true
	large := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(exact)))
		w.Write(exact[:1])
		tw := w.(*teeWriter)
		copied = !tw.skip || tw.counted > 0
		w.Write(exact[1:])
	})
	c.record(large, httptest.NewRecorder(), httptest.NewRequest("GET", "/large", nil))
	if copied {
		t.Error("an answer whose copy would pass maxEntry was copied")
	}
	if c.serve(httptest.NewRecorder(), httptest.NewRequest("GET", "/large", nil)) {
		t.Error("an answer whose copy passes maxEntry was kept")
	}
}
