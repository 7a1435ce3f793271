package httplimit_test

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// A client of a Unix-domain socket may bind its own end to a path of its
// choosing before it connects; net/http puts that path in the request's
// RemoteAddr. A relative path spelled as an address ("198.51.100.7:1")
// names no client: without TrustUnixPeers, every request over the socket
// is the one client ip:unknown, whatever path its client bound, so that a
// local process cannot take a quota per path, pass for a trusted proxy
// (127.0.0.1:1) whose forwarding and user headers would be believed, or
// for an exempt address.
func TestAUnixPeerCannotNameAnAddressByBindingItsSocket(t *testing.T) {
	t.Chdir(t.TempDir()) // the client binds relative paths: they are made here
	mw, _ := clockedMiddleware(t, httplimit.Options{
		Plans:           []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(100, time.Minute)}}},
		TrustedProxies:  []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		UserHeader:      "X-User-ID",
		ExemptAddresses: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")},
	})
	ln, err := net.Listen("unix", "app.sock")
	if err != nil {
		t.Fatalf("a Unix socket: %v", err)
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, err := mw.Decide(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		defer mw.Discard(res)
		w.Header().Set("X-Subject", res.Identity.Subject)
		var zero httplimit.Middleware
		w.Header().Set("X-Zero-Addr", zero.ClientAddr(r).String())
		if res.Exempt {
			w.Header().Set("X-Subject", "exempt by "+res.ExemptBy)
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	for _, c := range []struct {
		bound  string // "" for an unnamed end, as usual
		header map[string]string
	}{
		{"", nil},
		{"198.51.100.7:1", nil},
		{"198.51.100.8:1", nil},
		{"127.0.0.1:1", map[string]string{"X-Forwarded-For": "203.0.113.9"}},
		{"127.0.0.2:1", map[string]string{"X-User-ID": "alice"}},
		{"192.0.2.1:1", nil},
	} {
		d := net.Dialer{}
		if c.bound != "" {
			d.LocalAddr = &net.UnixAddr{Net: "unix", Name: c.bound}
		}
		client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true,
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				return d.DialContext(ctx, "unix", "app.sock")
			}}}
		r, _ := http.NewRequest("GET", "http://app/api/search", nil)
		for k, v := range c.header {
			r.Header.Set(k, v)
		}
		resp, err := client.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("X-Zero-Addr"); got != "invalid IP" {
			t.Errorf("a Unix peer bound to %q: the zero Middleware's ClientAddr is %s, want none", c.bound, got)
		}
		if got := resp.Header.Get("X-Subject"); got != "ip:unknown" {
			t.Errorf("a Unix peer bound to %q (headers %v) is the client %q, want ip:unknown", c.bound, c.header, got)
		}
	}
}
