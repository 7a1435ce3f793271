package server_test

import (
	"net/http"
	"testing"

	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

const keysPenaltyConfig = `
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 10, window: 1m}
penalty: {refusals: 20, within: 1m, for: 10m}
`

// failoverFixture is a server whose shared store is behind a failover
// deciding by onError while the store cannot be reached, and the switch
// that takes the store down.
func failoverFixture(t *testing.T, onError failover.OnError) (*fixture, *switchedStore) {
	var primary *switchedStore
	f := newFixtureWith(t, keysPenaltyConfig, func(o *server.Options) {
		primary = &switchedStore{Store: o.Store}
		local := memory.New(memory.WithSweepInterval(0))
		t.Cleanup(func() { local.Close() })
		fo, err := failover.New(primary, local, failover.Options{OnError: onError})
		if err != nil {
			t.Fatal(err)
		}
		o.Store, o.Failover = fo, fo
	})
	return f, primary
}

// An operator who boxes a client while the store cannot be reached, under
// on_store_error deny or allow, is told nothing was done: 503 with
// Retry-After: 1, as every error of the key admin API for a store that
// cannot be reached, never a 200 for a box written nowhere. Once the store
// is back, the client is not in the box.
func TestPenalizeWhileTheStoreIsDownIsA503(t *testing.T) {
	for _, onError := range []failover.OnError{failover.Deny, failover.Allow} {
		t.Run(onError.String(), func(t *testing.T) {
			f, primary := failoverFixture(t, onError)
			primary.down.Store(true)
			r := f.do(t, "POST", "/v1/keys/ext:abuser?action=penalize", "", nil)
			body := readAll(t, r)
			primary.down.Store(false)
			if r.StatusCode != http.StatusServiceUnavailable || r.Header.Get("Retry-After") != "1" {
				t.Errorf("penalize with the store down: %d, Retry-After %q, %s; want 503 with Retry-After: 1",
					r.StatusCode, r.Header.Get("Retry-After"), body)
			}
			var state struct {
				Limits []struct {
					Name      string `json:"name"`
					Remaining int64  `json:"remaining"`
				} `json:"limits"`
			}
			decode(t, f.do(t, "GET", "/v1/keys/ext:abuser", "", nil), &state)
			for _, l := range state.Limits {
				if l.Name == "penalty" && l.Remaining != 1 {
					t.Errorf("once the store is back: penalty remaining %d; want 1 (not boxed)", l.Remaining)
				}
			}
		})
	}
}

// GET /v1/keys/{subject} while the store cannot be reached under
// on_store_error deny answers 503 with Retry-After: 1, not the deny
// policy's made-up refusal read as the client's state (every limit used
// up, for a client that spent nothing).
func TestInspectWhileTheStoreIsDownUnderDenyIsA503(t *testing.T) {
	f, primary := failoverFixture(t, failover.Deny)
	primary.down.Store(true)
	r := f.do(t, "GET", "/v1/keys/ext:fresh", "", nil)
	body := readAll(t, r)
	if r.StatusCode != http.StatusServiceUnavailable || r.Header.Get("Retry-After") != "1" {
		t.Errorf("inspect with the store down under deny: %d, Retry-After %q, %s; want 503 with Retry-After: 1",
			r.StatusCode, r.Header.Get("Retry-After"), body)
	}
}
