package server

import (
	"testing"

	"github.com/sluice-dev/sluice/httplimit"
)

// TestRuleKeySaysWhoShares: /docs tells a client whom a rule's count is
// shared with, whatever attributes its key joins.
func TestRuleKeySaysWhoShares(t *testing.T) {
	for _, c := range []struct {
		key   []string
		paths []string
		want  string
	}{
		{nil, nil, "client (API key, user or address)"},
		{[]string{"header:X-Tenant", "route"}, []string{"/a", "/b"}, "value of X-Tenant and route"},
		{[]string{"route"}, []string{"/a"}, "all clients together"},
		{[]string{"route"}, []string{"/a", "/b"}, "all clients together, each route apart"},
		{[]string{"rule"}, []string{"/a", "/b"}, "all clients together"},
		{[]string{"ip/24", "path:t"}, []string{"/t/{t}"}, "client address and {t} of the path"},
		{[]string{"query:tenant", "cookie:s", "path"}, nil, "query parameter tenant and cookie s and path"},
		{[]string{"claim:org_id"}, nil, "claim org_id of your access token"},
	} {
		if got := ruleKey(httplimit.Rule{Key: c.key, Paths: c.paths}); got != c.want {
			t.Errorf("key %v on %v: %q, want %q", c.key, c.paths, got, c.want)
		}
	}
}
