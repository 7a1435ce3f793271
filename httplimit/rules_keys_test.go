package httplimit

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// The key cache gives back the string of the bytes it is given, whatever
// it remembers, replaces and however many goroutines ask at once; a key met
// again is the same string, not a new one.
func TestKeyCacheGivesTheKeyOfItsBytes(t *testing.T) {
	c := newKeyCache()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			buf := []byte{}
			for i := range 20_000 {
				want := fmt.Sprintf("scope/rule:r/%d|%d", (i*7+g)%9000, i%3)
				if i%500 == 0 {
					want += strings.Repeat("x", maxCachedKey) // past the cache's bound
				}
				buf = append(buf[:0], want...)
				got := c.key(buf)
				buf[0] = '!' // the key must not share the caller's bytes
				if got != want {
					t.Errorf("key(%q) = %q", want, got)
					return
				}
			}
		})
	}
	wg.Wait()
	a, b := c.key([]byte("scope/rule:r/acme")), c.key([]byte("scope/rule:r/acme"))
	if a != b || testing.AllocsPerRun(100, func() { c.key([]byte("scope/rule:r/acme")) }) != 0 {
		t.Error("a key met again is allocated again")
	}
}

// A path wildcard's value is the segment as ServeMux reads it, unescaped:
// "a/b" for "/files/a%2Fb", which a store key keeps only hashed.
func TestPathWildcardOfAnEscapedSlashIsHashedInTheKey(t *testing.T) {
	m, err := New(sluice.NewLimiter(memory.New()), Options{
		Plans: []*Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(5, time.Minute)}}},
		Rules: []Rule{{Name: "files", Paths: []string{"/files/{name}"}, Key: []string{"path:name"},
			Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("a/b"))
	want := "rule:files/#" + hex.EncodeToString(sum[:16])
	for _, path := range []string{"/files/a%2Fb", "/files/%61%2fb"} {
		res, err := m.DecideFor(t.Context(), Requester{Subject: "s"}, "GET", path, -1)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.ruleKeys) != 1 || !strings.HasSuffix(res.ruleKeys[0], want) {
			t.Errorf("%s: rule keys %q, want one ending %q", path, res.ruleKeys, want)
		}
		m.Discard(res)
	}
}
