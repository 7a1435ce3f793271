package server_test

import (
	"net/http"
	"testing"

	"github.com/sluice-dev/sluice/client"
	"github.com/sluice-dev/sluice/failover"
)

// A check admitted by on_store_error: allow while the store cannot be
// reached keeps the decision API's shape (200, every field), but its
// headers state no made-up figure, as the proxy's do: the limit's
// RateLimit-Policy and no RateLimit item. Its remaining is the policy's
// stand-in (docs/api.md), not what the client has left.
func TestACheckAdmittedWhileTheStoreIsDownStatesNoRateLimit(t *testing.T) {
	f, primary := failoverFixture(t, failover.Allow)
	primary.down.Store(true)
	r := f.do(t, "POST", "/v1/check", `{"user":"u"}`, nil)
	if r.StatusCode != http.StatusOK {
		t.Fatalf("check with the store down under allow: %d %s", r.StatusCode, readAll(t, r))
	}
	var res client.CheckResponse
	decode(t, r, &res)
	if !res.Allowed || res.Type != "" || res.Limit != "per-minute" || len(res.Limits) != 1 {
		t.Errorf("check with the store down under allow: %+v; want admitted by per-minute, no type", res)
	}
	if _, ok := res.Headers["Ratelimit"]; ok || res.Headers["Ratelimit-Policy"] == "" {
		t.Errorf("headers with the store down under allow: %q; want RateLimit-Policy and no RateLimit", res.Headers)
	}
}
