package server

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The stale cache's budget holds what its copies keep, headers included:
// an upstream that answers empty bodies with large header fields cannot
// make it keep more than staleMaxBytes.
func TestStaleCacheBudgetCountsHeaders(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	c := newStaleCache(time.Minute, func() time.Time { return now }, nil, nil)
	big := strings.Repeat("x", staleMaxEntry/2)
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Padding", big[:len(big)-len(r.URL.Path)])
		w.WriteHeader(http.StatusOK)
	})
	const n = 200
	for i := range n {
		c.record(up, httptest.NewRecorder(), httptest.NewRequest("GET", "/"+strconv.Itoa(i), nil))
	}
	kept := 0
	for _, e := range c.entries {
		for _, vs := range e.header {
			for _, v := range vs {
				kept += len(v)
			}
		}
		kept += len(e.body)
	}
	if kept > staleMaxBytes {
		t.Errorf("%d copies keep %d bytes, over the budget of %d", len(c.entries), kept, staleMaxBytes)
	}
	if len(c.entries) == 0 {
		t.Error("nothing kept")
	}
}

// smallStaleCache is a stale cache on clock with budgets of 2 MiB and of
// 32 KiB a copy: the tests of what the budgets do record a few hundred
// copies, which at the real budgets' sizes take half a minute under the
// race detector.
func smallStaleCache(clock func() time.Time) *staleCache {
	c := newStaleCache(time.Minute, clock, nil, nil)
	c.maxBytes, c.maxEntry = 2<<20, 32<<10
	return c
}

// Over its budget the cache drops its oldest copies first, never the one
// just recorded.
func TestStaleCacheDropsTheOldestFirst(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	c := smallStaleCache(func() time.Time { return now })
	body := strings.Repeat("y", c.maxEntry/2)
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(body)) })
	req := func(i int) *http.Request { return httptest.NewRequest("GET", "/"+strconv.Itoa(i), nil) }
	n := 3 * c.maxBytes / len(body)
	for i := range n {
		now = now.Add(time.Millisecond)
		c.record(up, httptest.NewRecorder(), req(i))
	}
	if !c.serve(httptest.NewRecorder(), req(n-1)) {
		t.Error("the copy just recorded was dropped")
	}
	if c.serve(httptest.NewRecorder(), req(0)) {
		t.Error("the oldest copy was kept over the budget")
	}
	for i := n - 100; i < n; i++ {
		if !c.serve(httptest.NewRecorder(), req(i)) {
			t.Errorf("copy %d of the last 100 was dropped", i)
		}
	}
}

// discardWriter is a ResponseWriter that keeps nothing.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header {
	if w.h == nil {
		w.h = http.Header{}
	}
	return w.h
}
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(int)             {}

// The copies being taken of answers still in progress are bounded
// together, as the copies kept are: many large reads at once under load
// cannot make the cache hold more than its budget of them.
func TestStaleCacheBoundsCopiesInProgress(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	c := smallStaleCache(func() time.Time { return now })
	chunk := make([]byte, c.maxEntry/2)
	n := c.maxBytes/len(chunk) + c.maxBytes/len(chunk)/4
	held := make(chan int, n)
	release := make(chan struct{})
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(chunk)
		tw, _ := w.(*teeWriter)
		held <- len(tw.buf)
		<-release
	})
	done := make(chan struct{})
	for i := range n {
		go func() {
			defer func() { done <- struct{}{} }()
			c.record(up, &discardWriter{}, httptest.NewRequest("GET", "/"+strconv.Itoa(i), nil))
		}()
	}
	total := 0
	for range n {
		total += <-held
	}
	close(release)
	for range n {
		<-done
	}
	if total > c.maxBytes {
		t.Errorf("%d answers in progress held %d bytes of copies, over %d", n, total, c.maxBytes)
	}
	// Ended, they count no more: the next answer is copied and kept.
	last := httptest.NewRequest("GET", "/last", nil)
	c.record(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(chunk) }), &discardWriter{}, last)
	if !c.serve(&discardWriter{}, last) {
		t.Error("an answer after the others ended was not kept")
	}
}

// An answer that will not be kept (not a 200, or one that may not be
// served stale) is not copied while it is written.
func TestStaleCacheCopiesOnlyWhatItMayKeep(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	c := newStaleCache(time.Minute, func() time.Time { return now }, nil, nil)
	for _, tc := range []struct {
		status int
		header string
	}{{http.StatusNotFound, ""}, {http.StatusOK, "private"}, {http.StatusOK, "no-store"}} {
		copied := -1
		up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if tc.header != "" {
				w.Header().Set("Cache-Control", tc.header)
			}
			w.WriteHeader(tc.status)
			w.Write([]byte("answer"))
			copied = len(w.(*teeWriter).buf)
		})
		c.record(up, &discardWriter{}, httptest.NewRequest("GET", "/", nil))
		if copied != 0 {
			t.Errorf("%d %q: %d bytes copied", tc.status, tc.header, copied)
		}
	}
}

// A copy is served only while its age, by the cache's clock, is in
// [0, ttl]: when the clock steps back, copies recorded "later" are not
// served for as long as the step (nor with a negative Age).
func TestStaleCacheServesNoCopyFromTheFuture(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	c := newStaleCache(time.Minute, func() time.Time { return now }, nil, nil)
	req := httptest.NewRequest("GET", "/page", nil)
	c.record(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("page")) }), &discardWriter{}, req)
	now = now.Add(-time.Hour)
	w := httptest.NewRecorder()
	if c.serve(w, req) {
		t.Errorf("a copy recorded an hour ahead of the clock was served, Age %q", w.Header().Get("Age"))
	}
}
