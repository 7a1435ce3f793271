package server_test

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestKeysFileIsWatched: a key added to the keys file (kept in another
// directory, as a mounted ConfigMap or Secret is, and replaced by a
// rename, as a config manager writes it) has its plan within seconds,
// without a signal; one taken out loses it. A change made after the
// server read the file and before it began to watch counts too.
func TestKeysFileIsWatched(t *testing.T) {
	mount := t.TempDir()
	keys := filepath.Join(mount, "keys.yaml")
	writeKeys := func(names ...string) {
		t.Helper()
		var b strings.Builder
		for _, n := range names {
			fmt.Fprintf(&b, "- {name: %s, sha256: %x, plan: pro}\n", n, sha256.Sum256([]byte(n+"-secret")))
		}
		tmp := keys + ".tmp"
		if err := os.WriteFile(tmp, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, keys); err != nil {
			t.Fatal(err)
		}
	}
	writeKeys("acme")
	srv, _ := loadServer(t, t.TempDir(), "keys_file: "+keys+"\nplans:\n"+
		"  free: {limits: [{name: per-minute, algorithm: gcra, quantity: 10, window: 1m}]}\n"+
		"  pro: {limits: [{name: per-minute, algorithm: gcra, quantity: 1000, window: 1m}]}\n"+
		"default_plan: free\nanonymous_plan: free\n", true)
	time.Sleep(20 * time.Millisecond) // past the file system's clock tick
	writeKeys("acme", "early")        // before the watcher runs
	addrs := serveOn(t, srv)
	policy := func(name string) string {
		t.Helper()
		req, _ := http.NewRequest("GET", "http://"+addrs.public+"/api/x", nil)
		req.Header.Set("X-API-Key", name+"-secret")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.Header.Get("RateLimit-Policy")
	}
	const pro, free = `"per-minute";q=1000;w=60`, `"per-minute";q=10;w=60`
	waitFor := func(name, want, what string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for got := policy(name); !strings.HasPrefix(got, want); got = policy(name) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %s's RateLimit-Policy is %q, want %q", what, name, got, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitFor("acme", pro, "at start")
	waitFor("early", pro, "after early was added before the watch began")
	if got := policy("globex"); !strings.HasPrefix(got, free) {
		t.Fatalf("an unlisted key: RateLimit-Policy %q, want the free plan's", got)
	}
	writeKeys("acme", "early", "globex")
	waitFor("globex", pro, "after globex was added to the keys file")
	writeKeys("globex")
	waitFor("acme", free, "after acme was taken out of the keys file")
}
