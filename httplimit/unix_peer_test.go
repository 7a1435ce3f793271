package httplimit_test

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// unixServer serves h on a Unix-domain socket in a temporary directory, as
// an application behind a local reverse proxy does (nginx proxy_pass
// http://unix:/run/app.sock), and returns a client that dials it.
func unixServer(t *testing.T, h http.Handler) *http.Client {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "app.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Skipf("no Unix sockets here: %v", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 5 * time.Second}
}

// viaUnix sends a request for each X-Forwarded-For value ("" for none) over
// c, as the local proxy would, and returns the statuses.
func viaUnix(t *testing.T, c *http.Client, xffs ...string) []int {
	t.Helper()
	var out []int
	for _, xff := range xffs {
		r, _ := http.NewRequest("GET", "http://app/api/search", nil)
		if xff != "" {
			r.Header.Set("X-Forwarded-For", xff)
		}
		resp, err := c.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		out = append(out, resp.StatusCode)
	}
	return out
}

// unixOptions limits each client to one request a minute.
func unixOptions() httplimit.Options {
	return httplimit.Options{Plans: []*httplimit.Plan{{Name: "free",
		Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}}}}
}

func TestUnixSocketPeers(t *testing.T) {
	t.Run("trusted with TrustUnixPeers: each forwarded client is its own", func(t *testing.T) {
		o := unixOptions()
		o.TrustUnixPeers = true
		mw, _ := clockedMiddleware(t, o)
		got := viaUnix(t, unixServer(t, mw.Handler(okHandler())),
			"198.51.100.1", "198.51.100.2", "203.0.113.9, 198.51.100.1")
		// The third is 198.51.100.1 again: the rightmost hop, the one the
		// local proxy appended, whatever the client wrote before it.
		if want := []int{200, 200, 429}; !slices.Equal(got, want) {
			t.Fatalf("statuses %v, want %v", got, want)
		}
	})
	t.Run("trusted with TrustUnixPeers: the user header is believed", func(t *testing.T) {
		o := unixOptions()
		o.TrustUnixPeers, o.UserHeader = true, "X-User"
		mw, _ := clockedMiddleware(t, o)
		var subject string
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			res, err := mw.Decide(r)
			if err != nil {
				t.Error(err)
				return
			}
			subject = res.Identity.Subject
			mw.Discard(res)
		})
		r, _ := http.NewRequest("GET", "http://app/", nil)
		r.Header.Set("X-User", "alice")
		resp, err := unixServer(t, h).Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if subject != "user:alice" {
			t.Fatalf("subject %q, want user:alice", subject)
		}
	})
	t.Run("untrusted by default: one client, whatever it forwards", func(t *testing.T) {
		mw, _ := clockedMiddleware(t, unixOptions())
		got := viaUnix(t, unixServer(t, mw.Handler(okHandler())), "198.51.100.1", "198.51.100.2", "")
		if want := []int{200, 429, 429}; !slices.Equal(got, want) {
			t.Fatalf("statuses %v, want %v", got, want)
		}
	})
	t.Run("a trusted CIDR does not make a Unix peer trusted", func(t *testing.T) {
		o := unixOptions()
		o.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("::/0")}
		mw, _ := clockedMiddleware(t, o)
		got := viaUnix(t, unixServer(t, mw.Handler(okHandler())), "198.51.100.1", "198.51.100.2")
		if want := []int{200, 429}; !slices.Equal(got, want) {
			t.Fatalf("statuses %v, want %v", got, want)
		}
	})
}

func TestUnixSocketPeersTrustedFurther(t *testing.T) {
	t.Run("a rule keyed by a trusted header needs no trusted CIDR", func(t *testing.T) {
		o := unixOptions()
		o.TrustUnixPeers = true
		o.Rules = []httplimit.Rule{{Name: "tenants", Key: []string{"header:X-Tenant"}, Fallback: httplimit.FallbackSkip,
			Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}}}
		mw, _ := clockedMiddleware(t, o)
		c := unixServer(t, mw.Handler(okHandler()))
		var got []int
		for i, tenant := range []string{"acme", "acme"} {
			r, _ := http.NewRequest("GET", "http://app/", nil)
			r.Header.Set("X-Tenant", tenant)
			r.Header.Set("X-Forwarded-For", netip.AddrFrom4([4]byte{198, 51, 100, byte(i + 1)}).String())
			resp, err := c.Do(r)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			got = append(got, resp.StatusCode)
		}
		// Two clients of one tenant: the plan admits both, the tenant's
		// rule the first.
		if want := []int{200, 429}; !slices.Equal(got, want) {
			t.Fatalf("statuses %v, want %v", got, want)
		}
	})
	t.Run("a RemoteAddr that holds an address is judged by it", func(t *testing.T) {
		// A listener behind a PROXY protocol reader (or a handler before
		// the middleware) names the client: that address is the peer, not
		// the socket, and it is no trusted proxy.
		o := unixOptions()
		o.TrustUnixPeers = true
		mw, _ := clockedMiddleware(t, o)
		named := mw.Handler(okHandler())
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.RemoteAddr = "192.0.2.7:1234"
			named.ServeHTTP(w, r)
		})
		got := viaUnix(t, unixServer(t, h), "198.51.100.1", "198.51.100.2")
		if want := []int{200, 429}; !slices.Equal(got, want) {
			t.Fatalf("statuses %v, want %v: the forwarded hops of an untrusted peer were believed", got, want)
		}
	})
}
