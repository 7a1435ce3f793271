package httplimit_test

import (
	"crypto/sha256"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// A rule keyed by api_key holds made-up keys to what the plan does: with
// UnknownKeys "ip" an unlisted key is not believed, and the rule's
// fallback (the client address) keys it, so a client inventing a key per
// request mints no fresh quota of the rule. With UnknownKeys "key" an
// unlisted key is a client of its own, for the rule as for the plan.
func TestARuleKeyedByAPIKeyMintsNoQuotaForMadeUpKeys(t *testing.T) {
	for _, c := range []struct {
		unknown string
		want    []int
	}{
		{"ip", []int{200, 429, 429}},
		{"key", []int{200, 200, 200}},
	} {
		free := &httplimit.Plan{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(100, time.Minute)}}
		mw, _ := clockedMiddleware(t, httplimit.Options{
			Plans: []*httplimit.Plan{free}, UnknownKeys: c.unknown,
			Keys: []httplimit.Key{{Name: "listed", SHA256: sha256.Sum256([]byte("listed-key"))}},
			Rules: []httplimit.Rule{{Name: "generate", Paths: []string{"/api/search"}, Key: []string{"api_key"},
				Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}}},
		})
		h := mw.Handler(okHandler())
		for i, key := range []string{"made-up-1", "made-up-2", "made-up-3"} {
			w := do(h, req{remote: "192.0.2.7:1", header: map[string]string{"X-API-Key": key}})
			if w.Code != c.want[i] {
				t.Errorf("unknown_keys %s, made-up key %d: %d, want %d", c.unknown, i+1, w.Code, c.want[i])
			}
		}
		// A listed key keeps a count of its own.
		if w := do(h, req{remote: "192.0.2.7:1", header: map[string]string{"X-API-Key": "listed-key"}}); w.Code != 200 {
			t.Errorf("unknown_keys %s, the listed key: %d, want 200", c.unknown, w.Code)
		}
	}
}
