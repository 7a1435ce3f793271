package server_test

import (
	"io"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
)

// A reload that leaves the upstream and the stale cache's settings as they
// were keeps the copies the cache holds: at level 2 they are what reads
// are answered with while the upstream is shed, and a reload then (a key
// added, a limit changed) must not take them away. A reload that changes
// the cache's settings (stale_for) starts it empty.
func TestReloadKeepsTheStaleCacheWhenItsSettingsStay(t *testing.T) {
	var hits atomic.Int64
	f := newFixtureOn(t, staleConfig, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte("items"))
	}))
	pin := func(level string) {
		resp := f.do(t, "PUT", "/v1/degradation", `{"level":"`+level+`"}`, nil)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("pin %s: %d", level, resp.StatusCode)
		}
	}
	fromCache := func() bool {
		t.Helper()
		req, _ := http.NewRequest("GET", f.http.URL+"/items", nil)
		req.Header.Set("X-Api-Key", "alice")
		before := hits.Load()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return hits.Load() == before && resp.Header.Get("Cache-Status") != ""
	}
	reload := func(old, new string) {
		t.Helper()
		b, err := os.ReadFile(f.file)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), old) {
			t.Fatalf("the configuration has no %q", old)
		}
		if err := os.WriteFile(f.file, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := f.srv.Reload(); err != nil {
			t.Fatal(err)
		}
	}

	pin("elevated") // records
	fromCache()
	pin("high")
	if !fromCache() {
		t.Fatal("at level 2 the read recorded at level 1 was not answered from the stale cache")
	}
	reload("quantity: 1000, window: 1m}]\ndefault_plan", "quantity: 2000, window: 1m}]\ndefault_plan")
	if !fromCache() {
		t.Error("after a reload that changed a limit, the read was not answered from the stale cache")
	}
	reload("stale_for: 30s", "stale_for: 40s")
	if fromCache() {
		t.Error("after a reload that changed stale_for, the read was answered from the old stale cache")
	}
}
