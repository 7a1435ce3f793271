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

// Over its budget the cache drops its oldest copies first, never the one
// just recorded.
func TestStaleCacheDropsTheOldestFirst(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	c := newStaleCache(time.Minute, func() time.Time { return now }, nil, nil)
	body := strings.Repeat("y", staleMaxEntry/2)
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(body)) })
	req := func(i int) *http.Request { return httptest.NewRequest("GET", "/"+strconv.Itoa(i), nil) }
	n := 3 * staleMaxBytes / len(body)
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
