package server_test

import (
	"strings"
	"testing"
)

// hostKeyConfig keys a rule by the request's host, one request a minute
// per host.
const hostKeyConfig = `
identity:
  trusted_proxies: [127.0.0.1/32]
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m}
rules:
  - name: hosts
    key: [host]
    limits: [{name: per-host, algorithm: fixed-window, quantity: 1, window: 1m}]
`

// docs/api.md: a check's "host" is "the request's host (a port is
// ignored)", and an IPv6 address may be given without brackets, as
// net/url's Hostname gives it: 2001:db8::1 is that host, not "2001:db8:"
// and a port, so 2001:db8::2 has a count of its own, and the key admin
// API's rule:hosts/2001:db8::1 names the state the check counted in.
func TestACheckOfABareIPv6HostCountsThatHost(t *testing.T) {
	f := newFixture(t, hostKeyConfig)
	st, m, raw := postCheck(t, f, `{"user":"a","host":"2001:db8::1"}`)
	if st != 200 || m["allowed"] != true {
		t.Fatalf("first check of host 2001:db8::1: %d %s", st, raw)
	}
	st, m, raw = postCheck(t, f, `{"user":"b","host":"2001:db8::2"}`)
	if st != 200 || m["allowed"] != true {
		t.Errorf("first check of host 2001:db8::2: %d %s; want allowed (another host than 2001:db8::1, whose count is spent)", st, raw)
	}
	r := f.do(t, "GET", "/v1/keys/rule:hosts/2001:db8::1", "", nil)
	if body := readAll(t, r); r.StatusCode != 200 || !strings.Contains(body, `"used":1`) {
		t.Errorf("GET /v1/keys/rule:hosts/2001:db8::1: %d %s; want the state the check of host 2001:db8::1 counted in (used 1)", r.StatusCode, body)
	}
}
