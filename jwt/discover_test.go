package jwt_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/sluice-dev/sluice/jwt"
)

// provider is an OpenID provider: a discovery document at
// /.well-known/openid-configuration that names its issuer and its key set,
// served at /keys.
type provider struct {
	srv             *httptest.Server
	issuer, jwksURI atomic.Pointer[string]
	docs, sets      atomic.Int64
	set             []byte
}

func newProvider(t *testing.T, set []byte) *provider {
	p := &provider{set: set}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/realms/api/.well-known/openid-configuration":
			p.docs.Add(1)
			w.Write([]byte(`{"issuer":"` + *p.issuer.Load() + `","jwks_uri":"` + *p.jwksURI.Load() + `","token_endpoint":"x"}`))
		case "/realms/api/keys":
			p.sets.Add(1)
			w.Write(p.set)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(p.srv.Close)
	issuer, keys := p.srv.URL+"/realms/api", p.srv.URL+"/realms/api/keys"
	p.issuer.Store(&issuer)
	p.jwksURI.Store(&keys)
	return p
}

// With Discover, the key set is the one the issuer's discovery document
// names, read again at every fetch.
func TestDiscoverFindsTheKeysTheIssuerNames(t *testing.T) {
	p := newProvider(t, set(jwk(ecKey(), "k1")))
	issuer := *p.issuer.Load()
	v := newVerifier(t, jwt.Options{Discover: true, Issuer: issuer})
	got, err := v.VerifyToken(context.Background(), sign(t, jose.ES256, ecKey(), "k1", claims("iss", issuer)))
	if err != nil || got.Subject != "alice" {
		t.Fatalf("a token of the discovered keys: %+v, %v", got, err)
	}
	if err := v.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d, s := p.docs.Load(), p.sets.Load(); d != 2 || s != 2 {
		t.Errorf("after two fetches: %d documents and %d sets read, want 2 and 2", d, s)
	}
	// The issuer's slash is not doubled.
	v2 := newVerifier(t, jwt.Options{Discover: true, Issuer: issuer + "/"})
	if err := v2.Refresh(context.Background()); err == nil || !strings.Contains(err.Error(), "names issuer") {
		t.Errorf("an issuer that differs by a slash from the document's: %v, want the issuers told apart", err)
	}
}

// A document naming another issuer, no key set, or a key set at a URL no
// key set may come from is refused, and the keys in use stay.
func TestDiscoveryDocumentsThatAreWrong(t *testing.T) {
	p := newProvider(t, set(jwk(ecKey(), "k1")))
	issuer := *p.issuer.Load()
	v := newVerifier(t, jwt.Options{Discover: true, Issuer: issuer})
	ctx := context.Background()
	if err := v.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct{ issuer, jwksURI, want string }{
		"another issuer":  {"https://evil.example/", *p.jwksURI.Load(), "names issuer"},
		"no key set":      {issuer, "", "no jwks_uri"},
		"plain HTTP away": {issuer, "http://keys.example/set", "jwks_uri"},
	} {
		p.issuer.Store(&c.issuer)
		p.jwksURI.Store(&c.jwksURI)
		if err := v.Refresh(ctx); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, c.want)
		}
		if v.Keys() != 1 {
			t.Errorf("%s: %d keys in use, want the 1 fetched before", name, v.Keys())
		}
	}
}

func TestDiscoverNeedsAnIssuerToDiscover(t *testing.T) {
	for name, c := range map[string]struct {
		o    jwt.Options
		want string
	}{
		"no issuer":           {jwt.Options{Discover: true}, "Discover: needs Issuer"},
		"an issuer not a URL": {jwt.Options{Discover: true, Issuer: "acme"}, "Issuer: with Discover"},
		"and a KeysURL":       {jwt.Options{Discover: true, Issuer: "https://id.example/", KeysURL: "https://id.example/keys"}, "only one may be set"},
		// Issuer + "/.well-known/openid-configuration" would be the query's
		// or the fragment's end, not the document's path.
		"an issuer with a query":        {jwt.Options{Discover: true, Issuer: "https://id.example/realms/api?tenant=acme"}, "Issuer: with Discover: \"https://id.example/realms/api?tenant=acme\" has a query"},
		"an issuer with a fragment":     {jwt.Options{Discover: true, Issuer: "https://id.example/realms/api#x"}, "has a query or a fragment"},
		"an issuer with an empty query": {jwt.Options{Discover: true, Issuer: "https://id.example/realms/api?"}, "has a query or a fragment"},
	} {
		if _, err := jwt.New(c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, c.want)
		}
	}
}

// The key set an https:// issuer's document names is fetched over
// https:// too, and from a loopback host only when the issuer is on one.
func TestADiscoveredKeySetNeverLeavesHTTPSNorReachesLoopbackFromAnotherHost(t *testing.T) {
	body := set(jwk(ecKey(), "k1"))
	plainKeys := newKeysServer(t, body)
	const issuer = "https://issuer.example.com/realms/api"
	var jwksURI atomic.Pointer[string]
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/realms/api/.well-known/openid-configuration" {
			w.Write([]byte(`{"issuer":"` + issuer + `","jwks_uri":"` + *jwksURI.Load() + `"}`))
			return
		}
		w.Write(body)
	}))
	defer srv.Close()
	client := exampleClient(t, srv, map[string]string{
		"issuer.example.com:443": srv.Listener.Addr().String(),
		"keys.example.com:443":   srv.Listener.Addr().String(),
	})
	for _, c := range []struct {
		jwksURI string
		ok      bool
	}{
		{"https://keys.example.com/keys", true},
		{plainKeys.URL + "/keys", false},
		{srv.URL + "/keys", false},
	} {
		jwksURI.Store(&c.jwksURI)
		v := newVerifier(t, jwt.Options{Discover: true, Issuer: issuer, Refresh: time.Hour, Client: client})
		err := v.Refresh(context.Background())
		if c.ok && err != nil {
			t.Errorf("jwks_uri %s: %v", c.jwksURI, err)
		}
		if !c.ok && (err == nil || !strings.Contains(err.Error(), "jwks_uri")) {
			t.Errorf("jwks_uri %s: %v, want it refused", c.jwksURI, err)
		}
		v.Close()
	}
}
