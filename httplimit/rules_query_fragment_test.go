package httplimit_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// Go's server keeps a "#" a client sends in the request's query
// ("GET /api/search?tenant=acme#1" has RawQuery "tenant=acme#1"), while
// nginx, PHP, Express, Puma and gunicorn end the query there and read
// tenant acme. A rule keyed by "query:tenant" reads the query as they
// do: each "#…" is tenant acme's request, no fresh count
// (docs/rules.md, Keys). A pair past the "#" and an "&", which Go alone
// reads ("?v=1#&tenant=globex" is tenant globex to a Go handler, no
// tenant to the others), makes the parameter ambiguous: counted with
// every such request of the rule, not skipped by its fallback.
func TestAQueryKeyReadsTheQueryBeforeAFragment(t *testing.T) {
	mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "tenants", Key: []string{"query:tenant"}, Fallback: httplimit.FallbackSkip,
		Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}})
	var rs []req
	for i, q := range []string{"tenant=acme", "tenant=acme#1", "tenant=acme#2", "tenant=acme#&v=1",
		"v=1#&tenant=globex", "v=2#x&tenant=initech", "tenant=globex"} {
		rs = append(rs, req{remote: fmt.Sprintf("192.0.2.%d:1", i+1), path: "/api/search?" + q})
	}
	if got, want := statuses(mw, rs...), []int{200, 429, 429, 429, 200, 429, 200}; !slices.Equal(got, want) {
		t.Errorf("tenant acme, with #1, #2 and #&v=1; tenants past a \"#\" twice; tenant globex: %v, want %v", got, want)
	}
}
