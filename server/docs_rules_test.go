package server

import (
	"testing"

	"github.com/sluice-dev/sluice/httplimit"
)

// TestRuleKeySaysWhoShares: /docs tells a client whom a rule's count is
// shared with, whatever attributes its key joins: the addresses an
// "ip/N" key counts together, and, where the key may lack a value, whom
// the requests without one share a count with (nothing of them under
// skip: the page never tells what escapes a limit).
func TestRuleKeySaysWhoShares(t *testing.T) {
	for _, c := range []struct {
		key      []string
		paths    []string
		fallback string
		want     string
	}{
		{nil, nil, "", "client (API key, user or address)"},
		{[]string{"header:X-Tenant", "route"}, []string{"/a", "/b"}, "", "value of X-Tenant and route; requests without it: per client address"},
		{[]string{"route"}, []string{"/a"}, "", "all clients together"},
		{[]string{"route"}, []string{"/a", "/b"}, "", "all clients together, each route apart"},
		{[]string{"rule"}, []string{"/a", "/b"}, "", "all clients together"},
		{[]string{"ip"}, nil, "", "client address"},
		{[]string{"ip/24", "path:t"}, []string{"/t/{t}"}, "", "client address (IPv4 per /24: 256 addresses together; IPv6 per /64) and {t} of the path"},
		{[]string{"ip/32/128"}, nil, "", "client address (IPv4 per /32, IPv6 per /128)"},
		{[]string{"ip/16/48"}, nil, "", "client address (IPv4 per /16: 65,536 addresses together; IPv6 per /48)"},
		{[]string{"path:rest"}, []string{"/files/{rest...}"}, "skip", "{rest} of the path"},
		{[]string{"path:rest"}, []string{"/files/{rest...}"}, "", "{rest} of the path; requests without it: per client address"},
		{[]string{"query:tenant", "cookie:s", "path"}, nil, "shared", "query parameter tenant and cookie s and path; requests without it: all of them together, one count"},
		{[]string{"claim:org_id"}, nil, "ip", "claim org_id of your access token; requests without it: per client address"},
		{[]string{"api_key"}, nil, "skip", "API key"},
		{[]string{"api_key"}, nil, "shared", "API key; requests without it: all of them together, one count"},
		{[]string{"host"}, nil, "skip", "host"},
	} {
		if got := ruleKey(httplimit.Rule{Key: c.key, Paths: c.paths, Fallback: c.fallback}, 64); got != c.want {
			t.Errorf("key %v on %v, fallback %q: %q, want %q", c.key, c.paths, c.fallback, got, c.want)
		}
	}
}
