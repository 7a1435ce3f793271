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
