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

// A limit renamed with id: its old name keeps what clients spent, on
// memory and on Redis; one whose algorithm changes starts afresh.
func TestReloadRenamedLimitKeepsItsState(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		f := newFixture(t, testConfig, kind)
		key := map[string]string{"X-API-Key": "demo-free-key"}
		for i := range 3 { // free: 3 a minute, all spent
			if r := f.do(t, "GET", "/a", "", key); r.StatusCode != 200 {
				t.Fatalf("request %d: %d", i+1, r.StatusCode)
			}
		}
		up := f.srv.Config().Upstream
		reload := func(from, to string) {
			t.Helper()
			if !strings.Contains(testConfig, from) {
				t.Fatalf("the test config has no %q", from)
			}
			os.WriteFile(f.file, []byte("upstream: "+up+"\n"+strings.Replace(testConfig, from, to, 1)+testAdmin), 0o644)
			if err := f.srv.Reload(); err != nil {
				t.Fatal(err)
			}
		}
		reload("{name: per-minute, algorithm: fixed-window, quantity: 3,", "{name: minutely, id: per-minute, algorithm: fixed-window, quantity: 3,")
		if r := f.do(t, "GET", "/a", "", key); r.StatusCode != 429 {
			t.Fatalf("after renaming the limit with its id: %d, want 429 (the state was lost)", r.StatusCode)
		}
		if got := r429Policy(t, f, key); !strings.Contains(got, `"minutely"`) {
			t.Errorf("the renamed limit's headers: %q, want its new name", got)
		}
		reload("{name: per-minute, algorithm: fixed-window, quantity: 3,", "{name: per-minute, algorithm: sliding-window-log, quantity: 3,")
		if r := f.do(t, "GET", "/a", "", key); r.StatusCode != 200 {
			t.Errorf("after changing the algorithm: %d, want 200 (a fresh state)", r.StatusCode)
		}
	})
}

// r429Policy returns the RateLimit-Policy header of one more request.
func r429Policy(t *testing.T, f *fixture, key map[string]string) string {
	t.Helper()
	return f.do(t, "GET", "/a", "", key).Header.Get("RateLimit-Policy")
}
