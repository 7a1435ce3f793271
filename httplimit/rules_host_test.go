package httplimit_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// TestARuleOfAHostTakesItsNameWithTheRootDot: "api.example.com." is the
// fully qualified form of api.example.com, which DNS and the servers behind
// sluice (nginx's server_name, Envoy's strip_trailing_host_dot) take for the
// same host: a client adding the dot neither leaves a rule of the host nor
// gets a count of its own under a "host" key.
func TestARuleOfAHostTakesItsNameWithTheRootDot(t *testing.T) {
	mw, _ := rulesMiddleware(t,
		httplimit.Rule{Name: "api", Hosts: []string{"api.example.com"}, Key: []string{"host"},
			Limits: []sluice.Limit{sluice.FixedWindow(2, time.Minute)}},
		httplimit.Rule{Name: "net", Hosts: []string{"*.example.net"}, Key: []string{"rule"},
			Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}},
		httplimit.Rule{Name: "org", Hosts: []string{"x.example.org."}, Key: []string{"rule"},
			Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}})
	h := mw.Handler(okHandler())
	send := func(host string) int {
		hr := httptest.NewRequest("GET", "/api/search", nil)
		hr.Host = host
		w := httptest.NewRecorder()
		h.ServeHTTP(w, hr)
		return w.Code
	}
	for i, c := range []struct {
		host string
		want int
	}{
		{"api.example.com", 200},
		{"api.example.com.", 200},
		{"API.example.com.:8443", 429},
		{"eu.example.net.", 200},
		{"eu.example.net", 429},
		{"x.example.org", 200},
		{"x.example.org.", 429},
		{"x.example.org..", 429}, // trailing dots past the root's are no other host
		{"api.example.com...", 429},
	} {
		if got := send(c.host); got != c.want {
			t.Errorf("%d: %s: %d, want %d", i, c.host, got, c.want)
		}
	}
}

// TestAHostKeyIsOneCountInEveryCase: a "host" key is the host in lower
// case, whatever its length or characters. A name longer than 64
// characters, or an IPv6 literal, is kept hashed in the store key; a
// client changing the case of its letters, or the spelling of its
// address, still spends the count of that host, not a fresh one.
func TestAHostKeyIsOneCountInEveryCase(t *testing.T) {
	const long = "tenant-with-a-rather-long-name-0123456789.eu-west-1.api.example.com" // 67 characters
	for _, hosts := range [][]string{
		{long, "Tenant-With-A-Rather-Long-Name-0123456789.EU-WEST-1.api.example.com"},
		{"[2001:db8::a]:8443", "[2001:DB8::A]", "[2001:db8:0:0::a]"},
	} {
		mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "tenants", Key: []string{"host"},
			Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}})
		h := mw.Handler(okHandler())
		for i, host := range hosts {
			hr := httptest.NewRequest("GET", "/api/search", nil)
			hr.Host = host
			w := httptest.NewRecorder()
			h.ServeHTTP(w, hr)
			if want := map[bool]int{true: 200, false: 429}[i == 0]; w.Code != want {
				t.Errorf("%s: %d, want %d", host, w.Code, want)
			}
		}
	}
}
