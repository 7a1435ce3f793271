package httplimit_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// TestAnIPv6AddressWithoutBracketsIsAHostWithoutAPort: an IPv6 address
// carries a port only in brackets ("[2001:db8::1]:8443"); one without them
// ("2001:db8::1", as net/url's Hostname gives it, and the decision API's
// host takes it) is that host whole, not "2001:db8:" and a port. Two such
// hosts are counted apart under a "host" key, each with its bracketed
// spellings.
func TestAnIPv6AddressWithoutBracketsIsAHostWithoutAPort(t *testing.T) {
	mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "hosts", Key: []string{"host"},
		Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}})
	h := mw.Handler(okHandler())
	for i, c := range []struct {
		host string
		want int
	}{
		{"2001:db8::1", 200},
		{"2001:db8::2", 200},
		{"[2001:db8::1]:8443", 429},
		{"[2001:DB8::2]", 429},
		{"2001:db8:0::1", 429},
		{"::1", 200},
		{"[::1]:80", 429},
		{"192.0.2.1", 200},
		{"192.0.2.1:8080", 429},
		{"api.example.com:8443", 200},
		{"api.example.com", 429},
	} {
		hr := httptest.NewRequest("GET", "/api/search", nil)
		hr.Host = c.host
		w := httptest.NewRecorder()
		h.ServeHTTP(w, hr)
		if w.Code != c.want {
			t.Errorf("%d: %s: %d, want %d", i, c.host, w.Code, c.want)
		}
	}
}
