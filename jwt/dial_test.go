package jwt_test

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/jwt"
)

// A redirect or a discovered jwks_uri to a host whose name resolves to the
// local host is refused where the connection is made, as one to a
// loopback URL is refused by its URL: the set of an issuer on the internet
// is never read from a service of the Verifier's own host, whatever a name
// leads to. The configured URL's own host is reached wherever it resolves,
// and a configured URL on a loopback host may lead anywhere.
func TestANameThatResolvesToTheLocalHostIsReachedOnlyFromALoopbackURL(t *testing.T) {
	body := set(jwk(edKey(), "ed"))
	const issuer = "https://issuer.example.com/realms/api"
	var to atomic.Pointer[string]
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, *to.Load(), http.StatusFound)
		case "/realms/api/.well-known/openid-configuration":
			w.Write([]byte(`{"issuer":"` + issuer + `","jwks_uri":"` + *to.Load() + `"}`))
		default:
			w.Write(body)
		}
	})
	srv := httptest.NewUnstartedServer(handler)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes of connections the test ends
	srv.StartTLS()
	defer srv.Close()
	port := strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port)
	hosts := map[string]string{
		"issuer.example.com:443": "127.0.0.1:" + port,
		"keys.example.com:443":   "127.0.0.1:" + port,
		"mapped.example.com:443": "[::ffff:127.0.0.1]:" + port,
		"any.example.com:443":    "0.0.0.0:" + port,
	}
	if l, err := net.Listen("tcp6", "[::1]:0"); err == nil {
		srv6 := &httptest.Server{Listener: l, Config: &http.Server{Handler: handler, ErrorLog: srv.Config.ErrorLog}}
		srv6.StartTLS()
		defer srv6.Close()
		hosts["keys6.example.com:443"] = srv6.Listener.Addr().String()
	}
	// A client that trusts the test server's certificate, of example.com
	// and its subdomains, and dials as http.DefaultTransport does: the
	// Verifier checks its connections.
	tlsConfig := srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConfig}}
	type hop struct {
		from, to string
		discover bool
		ok       bool
	}
	hops := []hop{
		{"https://issuer.example.com/redirect", "https://issuer.example.com/keys", false, true},
		{"https://issuer.example.com/redirect", "https://keys.example.com/keys", false, false},
		{"https://issuer.example.com/redirect", "https://mapped.example.com/keys", false, false},
		{"https://issuer.example.com/redirect", "https://any.example.com/keys", false, false},
		{issuer, "https://keys.example.com/keys", true, false},
		{srv.URL + "/redirect", "https://keys.example.com/keys", false, true},
		{srv.URL + "/redirect", "https://any.example.com/keys", false, true},
	}
	if _, ok := hosts["keys6.example.com:443"]; ok {
		hops = append(hops,
			hop{"https://issuer.example.com/redirect", "https://keys6.example.com/keys", false, false},
			hop{issuer, "https://keys6.example.com/keys", true, false})
	} else {
		t.Log("no ::1 to listen on: the IPv6 loopback is not tried")
	}
	for _, c := range hops {
		to.Store(&c.to)
		o := jwt.Options{KeysURL: c.from, Refresh: time.Hour, Client: client, Logger: quiet}
		if c.discover {
			o = jwt.Options{Discover: true, Issuer: c.from, Refresh: time.Hour, Client: client, Logger: quiet}
		}
		v, err := jwt.NewResolving(o, hosts)
		if err != nil {
			t.Fatal(err)
		}
		err = v.Refresh(context.Background())
		v.Close()
		if c.ok && err != nil {
			t.Errorf("from %s to %s: %v", c.from, c.to, err)
		}
		if !c.ok && (err == nil || !strings.Contains(err.Error(), "loopback address")) {
			t.Errorf("from %s to %s: %v, want the loopback address refused", c.from, c.to, err)
		}
	}
}

// A proxy on the local host (HTTPS_PROXY=http://127.0.0.1:3128, a
// sidecar's) is reached from an issuer on the internet: the connection is
// the proxy's, which resolves the issuer's name itself.
func TestAProxyOnTheLocalHostIsReached(t *testing.T) {
	body := set(jwk(edKey(), "ed"))
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) }))
	defer srv.Close()
	var tunnels atomic.Int64
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect || r.Host != "issuer.example.com:443" {
			http.Error(w, "not a tunnel to the issuer", http.StatusBadGateway)
			return
		}
		up, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer up.Close()
		w.WriteHeader(http.StatusOK)
		down, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer down.Close()
		tunnels.Add(1)
		go io.Copy(up, rw)
		io.Copy(down, up)
	}))
	defer proxy.Close()
	proxyURL, _ := url.Parse(proxy.URL)
	tlsConfig := srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConfig, Proxy: http.ProxyURL(proxyURL)}}
	v, err := jwt.NewResolving(jwt.Options{KeysURL: "https://issuer.example.com/keys", Refresh: time.Hour, Client: client, Logger: quiet}, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = v.Refresh(context.Background())
	v.Close()
	if err != nil || tunnels.Load() == 0 {
		t.Errorf("through a proxy on 127.0.0.1: %v, %d tunnels, want the keys through the proxy", err, tunnels.Load())
	}
}

// A given Client without a Transport sends through http.DefaultTransport,
// whatever a program made it (a wrapper that counts or traces): the
// Verifier checks the connections of a clone of it only when it is an
// *http.Transport, and never puts another in its place.
func TestAGivenClientWithoutATransportSendsThroughTheDefaultTransport(t *testing.T) {
	server := newKeysServer(t, set(jwk(edKey(), "ed")))
	var used atomic.Bool
	def := http.DefaultTransport
	http.DefaultTransport = roundTripper(func(r *http.Request) (*http.Response, error) {
		used.Store(true)
		return def.RoundTrip(r)
	})
	t.Cleanup(func() { http.DefaultTransport = def })
	v := newVerifier(t, jwt.Options{KeysURL: server.URL, Client: &http.Client{Timeout: 5 * time.Second}, Refresh: time.Hour})
	if err := v.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !used.Load() {
		t.Error("http.DefaultTransport, a wrapper, was not used")
	}
}
