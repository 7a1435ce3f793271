package server_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/server"
)

// unreachableStore decides nothing: every call fails as a store that
// cannot be reached.
type unreachableStore struct{ sluice.Store }

func (unreachableStore) Apply(context.Context, []sluice.Check, []sluice.Status) error {
	return sluice.ErrStoreUnavailable
}

// While the store cannot decide, the admin API's answers that say so are
// 503 with Retry-After, as every other answer of sluice's that asks to be
// retried: a caller's retry loop has a wait to keep.
func TestAdminAPIStoreDownIsA503WithRetryAfter(t *testing.T) {
	f := newFixtureWith(t, testConfig, func(o *server.Options) { o.Store = unreachableStore{o.Store} })
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/v1/check", `{"user":"u"}`},
		{"GET", "/v1/keys/user:u", ""},
	} {
		r := f.do(t, c.method, c.path, c.body, nil)
		body := readAll(t, r)
		if r.StatusCode != http.StatusServiceUnavailable || r.Header.Get("Retry-After") != "1" {
			t.Errorf("%s %s with the store down: %d, Retry-After %q; want 503 and 1: %s", c.method, c.path, r.StatusCode, r.Header.Get("Retry-After"), body)
		}
	}
}
