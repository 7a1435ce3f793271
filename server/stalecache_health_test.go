package server_test

import (
	"io"
	"net/http"
	"sync/atomic"
	"testing"
)

// The degradation class health names the endpoints a load balancer probes
// to know whether the service behind sluice is up: shed at no level, the
// only ones served at level 3. The stale cache never answers them, nor
// keeps copies of them: a probe at level 2 or 3 reaches the upstream, so
// that once the upstream is down the balancer sees its 503 and stops
// sending clients there, rather than the 200 recorded at level 1 for all
// of stale_for. Other reads are still answered from the cache.
func TestHealthChecksAreNeverAnsweredFromTheStaleCache(t *testing.T) {
	var down atomic.Bool
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ok")
	})
	f := newFixtureOn(t, staleConfig+"  classes: {health: [\"GET /api/health\"]}\n", up)
	pin := func(level string) {
		t.Helper()
		resp := f.do(t, "PUT", "/v1/degradation", `{"level":"`+level+`"}`, nil)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("pin %s: %d", level, resp.StatusCode)
		}
	}
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(f.http.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Cache-Status")
	}
	pin("elevated")
	for _, path := range []string{"/api/health", "/api/items"} {
		if code, _ := get(path); code != http.StatusOK {
			t.Fatalf("GET %s at level 1 with the upstream up: %d", path, code)
		}
	}
	pin("high")
	down.Store(true)
	if code, cs := get("/api/health"); code != http.StatusServiceUnavailable {
		t.Errorf("the health check at level 2 with the upstream down: %d (Cache-Status %q), want the upstream's 503, not a stale copy of its 200", code, cs)
	}
	if code, cs := get("/api/items"); code != http.StatusOK || cs == "" {
		t.Errorf("another read at level 2 with the upstream down: %d (Cache-Status %q), want the copy recorded at level 1", code, cs)
	}
	pin("critical")
	if code, cs := get("/api/health"); code != http.StatusServiceUnavailable || cs != "" {
		t.Errorf("the health check at level 3 with the upstream down: %d (Cache-Status %q), want the upstream's 503", code, cs)
	}
}
