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

// A client may send one API key header twice: a made-up key first, which
// changes with every request, and its own after it, which an upstream
// that reads the last copy (PHP behind FastCGI, where each copy is a
// parameter and the last one stays) acts on. As with a decoy in another
// header, copies that differ are the listed one among them: the key's
// quota is spent from any address.
func TestADecoyCopyOfTheKeyHeaderMintsNoQuota(t *testing.T) {
	plans := []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(3, time.Minute)}}}
	for _, c := range []struct {
		header string
		value  func(string) string
	}{
		{"X-API-Key", func(k string) string { return k }},
		{"Authorization", func(k string) string { return "Bearer " + k }},
	} {
		t.Run(c.header, func(t *testing.T) {
			mw, _ := clockedMiddleware(t, httplimit.Options{Plans: plans,
				Keys: []httplimit.Key{{Name: "real", SHA256: sha256.Sum256([]byte("real"))}}})
			var rs []req
			for i := range 5 {
				rs = append(rs, req{remote: fmt.Sprintf("192.0.2.%d:1", i+1),
					multi: map[string][]string{c.header: {c.value(fmt.Sprintf("decoy-%d", i)), c.value("real")}}})
			}
			if got, want := statuses(mw, rs...), []int{200, 200, 200, 429, 429}; !slices.Equal(got, want) {
				t.Errorf("from five addresses: %v, want %v", got, want)
			}
		})
	}
	t.Run("copies of one key are that key", func(t *testing.T) {
		mw, _ := clockedMiddleware(t, httplimit.Options{Plans: plans, UnknownKeys: "key"})
		same := req{remote: "192.0.2.9:1", multi: map[string][]string{"X-API-Key": {"mine", "mine"}}}
		other := req{remote: "192.0.2.9:1", header: map[string]string{"X-API-Key": "mine"}}
		if got, want := statuses(mw, same, same, same, other, req{remote: "192.0.2.9:1"}), []int{200, 200, 200, 429, 200}; !slices.Equal(got, want) {
			t.Errorf("one key sent twice, then once, then none: %v, want %v", got, want)
		}
	})
}
