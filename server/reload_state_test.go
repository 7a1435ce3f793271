package server_test

import (
	"os"
	"strings"
	"testing"
)

// A reload builds a new middleware of the same scope: what clients spent
// under the old configuration still counts under the new one.
func TestReloadKeepsWhatClientsSpent(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		f := newFixture(t, testConfig, kind)
		key := map[string]string{"X-API-Key": "demo-free-key"}
		for i := range 3 { // free: 3 a minute, all spent
			if r := f.do(t, "GET", "/a", "", key); r.StatusCode != 200 {
				t.Fatalf("request %d: %d", i+1, r.StatusCode)
			}
		}
		up := f.srv.Config().Upstream
		os.WriteFile(f.file, []byte("upstream: "+up+"\n"+strings.Replace(testConfig, "quantity: 3,", "quantity: 5,", 1)+testAdmin), 0o644)
		if err := f.srv.Reload(); err != nil {
			t.Fatal(err)
		}
		for i := range 2 { // 5 a minute now: 2 left, not 5
			if r := f.do(t, "GET", "/a", "", key); r.StatusCode != 200 {
				t.Fatalf("request %d after the reload: %d", i+1, r.StatusCode)
			}
		}
		if r := f.do(t, "GET", "/a", "", key); r.StatusCode != 429 {
			t.Errorf("third request after the reload: %d, want 429 (the reload reset what the client had spent)", r.StatusCode)
		}
		f.noStoreErrors(t)
	})
}
