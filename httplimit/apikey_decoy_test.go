package httplimit_test

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// A client whose upstream reads its API key from X-API-Key adds a made-up
// key in Authorization, read first, that changes with every request: it
// must not get a fresh quota each time. Where the key is listed, its
// requests spend the key's quota from any address; where every key is a
// client of its own (UnknownKeys "key"), keys that differ name no one, and
// the client is its address.
func TestADecoyKeyBesideTheRealOneMintsNoQuota(t *testing.T) {
	plans := []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(3, time.Minute)}}}
	decoy := func(i int, addr string) req {
		return req{remote: addr, header: map[string]string{"Authorization": fmt.Sprintf("Bearer decoy-%d", i), "X-API-Key": "real"}}
	}
	t.Run("a listed key", func(t *testing.T) {
		mw, _ := clockedMiddleware(t, httplimit.Options{Plans: plans,
			Keys: []httplimit.Key{{Name: "real", SHA256: sha256.Sum256([]byte("real"))}}})
		var rs []req
		for i := range 5 {
			rs = append(rs, decoy(i, fmt.Sprintf("192.0.2.%d:1", i+1)))
		}
		if got, want := statuses(mw, rs...), []int{200, 200, 200, 429, 429}; !slices.Equal(got, want) {
			t.Errorf("from five addresses: %v, want %v", got, want)
		}
	})
	t.Run("keys not listed", func(t *testing.T) {
		mw, _ := clockedMiddleware(t, httplimit.Options{Plans: plans, UnknownKeys: "key"})
		var rs []req
		for i := range 5 {
			rs = append(rs, decoy(i, "192.0.2.1:1"))
		}
		if got, want := statuses(mw, rs...), []int{200, 200, 200, 429, 429}; !slices.Equal(got, want) {
			t.Errorf("from one address: %v, want %v", got, want)
		}
		same := req{remote: "192.0.2.2:1", header: map[string]string{"Authorization": "Bearer mine", "X-API-Key": "mine"}}
		if got, want := statuses(mw, same, same, same, same, req{remote: "192.0.2.2:1"}), []int{200, 200, 200, 429, 200}; !slices.Equal(got, want) {
			t.Errorf("one key in both headers, then none: %v, want %v", got, want)
		}
	})
}
