package server_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestXRealIPIsSluicesInEverySpelling: X-Real-IP is always the address
// sluice identified the client by, never a value the request brought, in
// any spelling and from any peer: CGI-style servers (Rack, WSGI) read
// X_Real_IP as that same header, and a trusted peer (a load balancer that
// passes its client's headers on, as most do) must not carry a client's
// X_Real_IP to the upstream beside sluice's X-Real-IP.
func TestXRealIPIsSluicesInEverySpelling(t *testing.T) {
	got := make(chan http.Header, 1)
	f := newFixtureOn(t, testConfig, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
	}))
	// testConfig trusts 127.0.0.1: the test's client stands for a balancer
	// passing on its client's headers.
	r := f.do(t, "GET", "/x", "", map[string]string{"X-Forwarded-For": "203.0.113.7", "X_Real_IP": "6.6.6.6", "x-real-ip": "6.6.6.7"})
	readAll(t, r)
	h := <-got
	if v := h.Values("X-Real-Ip"); len(v) != 1 || v[0] != "203.0.113.7" {
		t.Errorf("X-Real-IP %q, want sluice's client 203.0.113.7", v)
	}
	for name, v := range h {
		if name != "X-Real-Ip" && strings.EqualFold(strings.ReplaceAll(name, "_", "-"), "x-real-ip") {
			t.Errorf("the upstream got %s: %q beside X-Real-IP, which a CGI-style server reads as X-Real-IP", name, v)
		}
	}
}
