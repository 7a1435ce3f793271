package httplimit

import (
	"fmt"
	"strings"
	"sync"
	"testing"
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
