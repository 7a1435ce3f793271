package server_test

import (
	"strings"
	"testing"
)

// The decision API refuses an ip with a zone (fe80::1%eth0): a zone names
// an interface of the caller's host, never part of a client's identity. The
// answer is a 400 problem body that names the field, as for any address
// that is not one.
func TestDecisionAPIRefusesAnIPWithAZone(t *testing.T) {
	f := newFixture(t, testConfig)
	r := f.do(t, "POST", "/v1/check", `{"ip":"fe80::1%eth0"}`, map[string]string{"Content-Type": "application/json"})
	body := readAll(t, r)
	if r.StatusCode != 400 || r.Header.Get("Content-Type") != "application/problem+json" || !strings.Contains(body, "ip: ") {
		t.Errorf("an IP with a zone: %d %q %.200s; want a 400 problem body naming the ip field", r.StatusCode, r.Header.Get("Content-Type"), body)
	}
}
