package jwt_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/sluice-dev/sluice/jwt"
)

// waitFor polls cond until it holds, failing the test after 10 s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after 10 s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestKeysURLIsFetchedInTheBackground(t *testing.T) {
	server := newKeysServer(t, set(jwk(rsaKey(), "rsa"), jwk(ecKey(), "ec")))
	var seen fetches
	v := newVerifier(t, jwt.Options{KeysURL: server.URL, OnFetch: seen.on})
	waitFor(t, "fetch", func() bool { _, _, n := seen.last(); return n == 1 })
	if keys, err, _ := seen.last(); keys != 2 || err != nil {
		t.Errorf("OnFetch(%d, %v), want (2, nil)", keys, err)
	}
	if n := v.Keys(); n != 2 {
		t.Errorf("Keys() = %d, want 2", n)
	}
	if accept := server.lastAccept(); accept != "application/json" {
		t.Errorf("Accept: %q", accept)
	}
	verify(t, v, sign(t, jose.RS256, rsaKey(), "rsa", claims()))
	verify(t, v, sign(t, jose.ES256, ecKey(), "ec", claims()))
	if n := server.requests.Load(); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestATokenBeforeTheFirstFetchWaitsForIt(t *testing.T) {
	server := newKeysServer(t, set(jwk(edKey(), "ed")))
	server.setDelay(50 * time.Millisecond)
	v := newVerifier(t, jwt.Options{KeysURL: server.URL})
	verify(t, v, sign(t, jose.EdDSA, edKey(), "ed", claims()))
	if n := server.requests.Load(); n != 1 {
		t.Errorf("%d requests, want 1: the token waits for the first fetch", n)
	}
}

func TestBeforeAnyFetchSucceedsTokensAreErrKey(t *testing.T) {
	server := newKeysServer(t, nil)
	server.serve(http.StatusServiceUnavailable, nil)
	v := newVerifier(t, jwt.Options{KeysURL: server.URL, Refresh: time.Hour})
	_, err := v.VerifyToken(context.Background(), sign(t, jose.EdDSA, edKey(), "ed", claims()))
	wantClass(t, err, jwt.ErrKey)
	if n := v.Keys(); n != 0 {
		t.Errorf("Keys() = %d, want 0", n)
	}
}

func TestANewKidIsFetchedOnceMinRefreshHasPassed(t *testing.T) {
	server := newKeysServer(t, set(jwk(rsaKey(), "old")))
	clock := newFakeClock()
	v, err := jwt.NewPaced(jwt.Options{KeysURL: server.URL, Clock: clockAt(now), Refresh: time.Hour, MinRefresh: time.Minute, Logger: quiet}, clock.now)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	verify(t, v, sign(t, jose.RS256, rsaKey(), "old", claims()))

	server.serve(http.StatusOK, set(jwk(rsaKey2(), "new")))
	rotated := sign(t, jose.RS256, rsaKey2(), "new", claims())
	_, err = v.VerifyToken(context.Background(), rotated)
	wantClass(t, err, jwt.ErrKey) // within MinRefresh of the first fetch
	if n := server.requests.Load(); n != 1 {
		t.Fatalf("%d requests within MinRefresh, want 1", n)
	}

	clock.advance(time.Minute)
	verify(t, v, rotated)
	if n := server.requests.Load(); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
	// The old key is gone with the set it was in.
	_, err = v.VerifyToken(context.Background(), sign(t, jose.RS256, rsaKey(), "old", claims()))
	wantClass(t, err, jwt.ErrKey)
	if n := server.requests.Load(); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

func TestAFloodOfMadeUpKidsFetchesOncePerMinRefresh(t *testing.T) {
	server := newKeysServer(t, set(jwk(edKey(), "ed")))
	clock := newFakeClock()
	var seen fetches
	v, err := jwt.NewPaced(jwt.Options{KeysURL: server.URL, Clock: clockAt(now), Refresh: time.Hour, MinRefresh: 30 * time.Second, OnFetch: seen.on, Logger: quiet}, clock.now)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	waitFor(t, "the first fetch", func() bool { _, _, n := seen.last(); return n == 1 })
	before := server.requests.Load()

	flood := func() {
		t.Helper()
		var wg sync.WaitGroup
		for i := range 200 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				tok := sign(t, jose.EdDSA, edKey(), fmt.Sprintf("made-up-%d", i), claims())
				_, err := v.VerifyToken(context.Background(), tok)
				if !errors.Is(err, jwt.ErrKey) {
					t.Errorf("a made-up kid: %v, want ErrKey", err)
				}
			}()
		}
		wg.Wait()
	}
	flood()
	if n := server.requests.Load() - before; n != 0 {
		t.Errorf("%d fetches within MinRefresh of the last, want 0", n)
	}

	// Once MinRefresh has passed, the flood's tokens share one fetch, even
	// while it is slow to answer.
	server.setDelay(20 * time.Millisecond)
	clock.advance(30 * time.Second)
	flood()
	if n := server.requests.Load() - before; n != 1 {
		t.Errorf("%d fetches for 200 made-up kids, want 1", n)
	}
	verify(t, v, sign(t, jose.EdDSA, edKey(), "ed", claims()))

	// Tokens of a kid that a fetch will find all wait for that one fetch.
	server.serve(http.StatusOK, set(jwk(edKey(), "ed"), jwk(ecKey(), "new")))
	clock.advance(30 * time.Second)
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tok := sign(t, jose.ES256, ecKey(), "new", claims())
			if _, err := v.VerifyToken(context.Background(), tok); err != nil {
				t.Errorf("a token of the new kid: %v", err)
			}
		}()
	}
	wg.Wait()
	if n := server.requests.Load() - before; n != 2 {
		t.Errorf("%d fetches, want 2: one more for the tokens of the new kid", n)
	}
}

func TestAFailedFetchKeepsTheKeysInUse(t *testing.T) {
	good := set(jwk(edKey(), "ed"))
	for _, c := range []struct {
		name   string
		status int
		body   []byte
		want   string
	}{
		{"500", http.StatusInternalServerError, good, "500"},
		{"204", http.StatusNoContent, nil, "204"},
		{"oversized", http.StatusOK, append(append([]byte(`{"keys":[`), good[9:len(good)-2]...), []byte(`]`+strings.Repeat(" ", 1<<20)+`}`)...), "longer than"},
		{"not JSON", http.StatusOK, []byte(`<html>`), "not a JWK Set"},
		{"no keys", http.StatusOK, []byte(`{"kty":"RSA"}`), "not a JWK Set: no"},
		{"no usable key", http.StatusOK, set(jwk(must(rsaKeyOfBits(1024)), "small")), "fewer than 2048"},
		{"a symmetric key", http.StatusOK, []byte(`{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}`), "no usable key"},
		{"an empty set", http.StatusOK, []byte(`{"keys":[]}`), "no usable key"},
	} {
		t.Run(c.name, func(t *testing.T) {
			server := newKeysServer(t, good)
			var seen fetches
			var log strings.Builder
			logger := slog.New(slog.NewTextHandler(&lockedWriter{w: &log}, nil))
			v := newVerifier(t, jwt.Options{KeysURL: server.URL, Refresh: time.Hour, OnFetch: seen.on, Logger: logger})
			waitFor(t, "the first fetch", func() bool { _, _, n := seen.last(); return n == 1 })
			server.serve(c.status, c.body)
			err := v.Refresh(context.Background())
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Refresh: %v, want an error saying %q", err, c.want)
			}
			if keys, ferr, _ := seen.last(); keys != 1 || ferr == nil {
				t.Errorf("OnFetch(%d, %v), want (1, an error)", keys, ferr)
			}
			if n := v.Keys(); n != 1 {
				t.Errorf("Keys() = %d, want 1", n)
			}
			verify(t, v, sign(t, jose.EdDSA, edKey(), "ed", claims()))
			v.Close()
			if !strings.Contains(log.String(), "level=WARN") || !strings.Contains(log.String(), c.want) {
				t.Errorf("logged %q, want a warning saying %q", log.String(), c.want)
			}
		})
	}
}

// lockedWriter is w for a logger of several goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestAFailedFetchIsRetriedSooner(t *testing.T) {
	server := newKeysServer(t, nil)
	server.serve(http.StatusInternalServerError, nil)
	var seen fetches
	newVerifier(t, jwt.Options{KeysURL: server.URL, Refresh: 20 * time.Millisecond, OnFetch: seen.on})
	waitFor(t, "retries", func() bool { _, _, n := seen.last(); return n >= 3 })
	if keys, err, _ := seen.last(); keys != 0 || err == nil {
		t.Errorf("OnFetch(%d, %v), want (0, an error)", keys, err)
	}
	server.serve(http.StatusOK, set(jwk(edKey(), "ed")))
	waitFor(t, "a successful fetch", func() bool { _, err, _ := seen.last(); return err == nil })
}

func TestTheSetIsFetchedAgainEveryRefresh(t *testing.T) {
	server := newKeysServer(t, set(jwk(edKey(), "ed")))
	newVerifier(t, jwt.Options{KeysURL: server.URL, Refresh: 10 * time.Millisecond})
	waitFor(t, "refreshes", func() bool { return server.requests.Load() >= 3 })
}

func TestARedirectIsFollowedOnlyToAURLKeysURLCouldBe(t *testing.T) {
	target := newKeysServer(t, set(jwk(edKey(), "ed")))
	// A client that reaches target for any host but 127.0.0.1, so that a
	// redirect the Verifier should not follow would succeed if it were.
	toTarget := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if !strings.HasPrefix(addr, "127.0.0.1:") {
				addr = target.Listener.Addr().String()
			}
			return new(net.Dialer).DialContext(ctx, network, addr)
		},
	}}
	defer toTarget.CloseIdleConnections()
	for _, c := range []struct {
		to string
		ok bool
	}{
		{target.URL + "/keys", true},
		{"http://localhost/keys", true},
		{"http://keys.example/keys", false},
		{"http://10.0.0.1/keys", false},
	} {
		redirect := httptest.NewServer(http.RedirectHandler(c.to, http.StatusFound))
		v := newVerifier(t, jwt.Options{KeysURL: redirect.URL, Refresh: time.Hour, Client: toTarget})
		err := v.Refresh(context.Background())
		if c.ok && err != nil {
			t.Errorf("redirect to %s: %v", c.to, err)
		}
		if !c.ok && (err == nil || !strings.Contains(err.Error(), "redirected")) {
			t.Errorf("redirect to %s: %v, want it refused", c.to, err)
		}
		v.Close()
		redirect.Close()
	}
}

func TestAGivenClientIsUsed(t *testing.T) {
	server := newKeysServer(t, set(jwk(edKey(), "ed")))
	var used atomic.Bool
	client := &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		used.Store(true)
		return http.DefaultTransport.RoundTrip(r)
	})}
	v := newVerifier(t, jwt.Options{KeysURL: server.URL, Client: client, Refresh: time.Hour})
	if err := v.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !used.Load() {
		t.Error("Options.Client was not used")
	}
	if client.CheckRedirect != nil {
		t.Error("Options.Client was changed")
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestRefreshAndTokensWaitNoLongerThanTheirContext(t *testing.T) {
	server := newKeysServer(t, nil)
	server.setDelay(time.Hour) // answered only when the request is given up
	v := newVerifier(t, jwt.Options{KeysURL: server.URL})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := v.Refresh(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Refresh: %v, want the context's deadline", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := v.VerifyToken(ctx, sign(t, jose.EdDSA, edKey(), "ed", claims()))
	wantClass(t, err, jwt.ErrKey)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("VerifyToken: %v, want the context's deadline wrapped", err)
	}
}

func TestCloseStopsEveryFetchAndIsIdempotent(t *testing.T) {
	server := newKeysServer(t, set(jwk(edKey(), "ed")))
	var seen fetches
	v, err := jwt.New(jwt.Options{KeysURL: server.URL, OnFetch: seen.on, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	verify(t, v, sign(t, jose.EdDSA, edKey(), "ed", claims("exp", nil)))
	server.setDelay(time.Hour)
	go v.Refresh(context.Background()) // hangs until Close
	waitFor(t, "the hanging fetch", func() bool { return server.requests.Load() == 2 })
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := v.Close(); err != nil {
			t.Error(err)
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close waits for a fetch that hangs")
	}
	if err := v.Close(); err != nil {
		t.Error(err)
	}
	if _, _, n := seen.last(); n != 1 {
		t.Errorf("OnFetch called %d times, want once: a fetch cut short by Close is not reported", n)
	}
	if err := v.Refresh(context.Background()); err == nil {
		t.Error("Refresh after Close: nil")
	}
	// Tokens are still verified, with the set in use.
	verify(t, v, sign(t, jose.EdDSA, edKey(), "ed", claims("exp", nil)))
	_, err = v.VerifyToken(context.Background(), sign(t, jose.EdDSA, edKey(), "other", claims("exp", nil)))
	wantClass(t, err, jwt.ErrKey)
	// goleak (TestMain) fails the package if a goroutine survived Close.
}

func TestCloseOfAVerifierWithoutKeysURL(t *testing.T) {
	v := newVerifier(t, jwt.Options{Secret: secret})
	for range 2 {
		if err := v.Close(); err != nil {
			t.Error(err)
		}
	}
	if err := v.Refresh(context.Background()); err != nil {
		t.Errorf("Refresh without KeysURL: %v", err)
	}
	verify(t, v, sign(t, jose.HS256, secret, "", claims()))
}

func TestAKeyRotatedUnderTheSameKidIsFetchedOnceMinRefreshHasPassed(t *testing.T) {
	for _, kid := range []string{"", "main"} {
		t.Run("kid "+kid, func(t *testing.T) {
			server := newKeysServer(t, set(jwk(rsaKey(), kid)))
			clock := newFakeClock()
			v, err := jwt.NewPaced(jwt.Options{KeysURL: server.URL, Clock: clockAt(now), Refresh: time.Hour, MinRefresh: time.Minute, Logger: quiet}, clock.now)
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			verify(t, v, sign(t, jose.RS256, rsaKey(), kid, claims()))

			// The issuer replaces its key, naming it as it named the old one.
			server.serve(http.StatusOK, set(jwk(rsaKey2(), kid)))
			rotated := sign(t, jose.RS256, rsaKey2(), kid, claims())
			_, err = v.VerifyToken(context.Background(), rotated)
			wantClass(t, err, jwt.ErrSignature) // within MinRefresh of the first fetch
			if n := server.requests.Load(); n != 1 {
				t.Fatalf("%d requests within MinRefresh, want 1", n)
			}

			clock.advance(time.Minute)
			verify(t, v, rotated)
			if n := server.requests.Load(); n != 2 {
				t.Errorf("%d requests, want 2", n)
			}
			// A forged signature prompts no more than MinRefresh allows.
			forged := sign(t, jose.RS256, rsaKey(), kid, claims())
			for range 10 {
				_, err = v.VerifyToken(context.Background(), forged)
				wantClass(t, err, jwt.ErrSignature)
			}
			if n := server.requests.Load(); n != 2 {
				t.Errorf("%d requests after forged tokens within MinRefresh, want 2", n)
			}
		})
	}
}

// exampleClient returns a client that trusts the TLS certificate of
// httptest's servers, tlsServer's (valid for *.example.com and
// 127.0.0.1), and reaches, for each host of hosts, the address it maps to;
// other hosts are dialled as they are.
func exampleClient(t *testing.T, tlsServer *httptest.Server, hosts map[string]string) *http.Client {
	t.Helper()
	tr := tlsServer.Client().Transport.(*http.Transport).Clone()
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if to, ok := hosts[addr]; ok {
			addr = to
		}
		return new(net.Dialer).DialContext(ctx, network, addr)
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// A redirect never leads from https:// to http://, nor from a host that
// is not loopback to one that is: the set of an issuer on the internet is
// never read from a service of the Verifier's own host, nor in the clear.
func TestARedirectNeverLeavesHTTPSNorReachesLoopbackFromAnotherHost(t *testing.T) {
	body := set(jwk(edKey(), "ed"))
	plainKeys := newKeysServer(t, body)
	tlsKeys := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) }))
	defer tlsKeys.Close()
	var to atomic.Pointer[string]
	redirect := func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, *to.Load(), http.StatusFound) }
	tlsRedirect := httptest.NewTLSServer(http.HandlerFunc(redirect))
	defer tlsRedirect.Close()
	plainRedirect := httptest.NewServer(http.HandlerFunc(redirect))
	defer plainRedirect.Close()
	client := exampleClient(t, tlsKeys, map[string]string{
		"issuer.example.com:443": tlsRedirect.Listener.Addr().String(),
		"keys.example.com:443":   tlsKeys.Listener.Addr().String(),
	})
	for _, c := range []struct {
		from, to string
		ok       bool
	}{
		{"https://issuer.example.com/keys", "https://keys.example.com/keys", true},
		{"https://issuer.example.com/keys", plainKeys.URL + "/keys", false},
		{"https://issuer.example.com/keys", fmt.Sprintf("http://localhost:%d/keys", plainKeys.Listener.Addr().(*net.TCPAddr).Port), false},
		{"https://issuer.example.com/keys", tlsKeys.URL + "/keys", false},
		{"https://issuer.example.com/keys", "https://localhost./keys", false},
		{"https://issuer.example.com/keys", "https://keys.localhost/keys", false},
		{"https://issuer.example.com/keys", "https://KEYS.LOCALHOST./keys", false},
		{tlsRedirect.URL + "/keys", plainKeys.URL + "/keys", false},
		{tlsRedirect.URL + "/keys", tlsKeys.URL + "/keys", true},
		{plainRedirect.URL + "/keys", plainKeys.URL + "/keys", true},
		{plainRedirect.URL + "/keys", "https://keys.example.com/keys", true},
	} {
		to.Store(&c.to)
		v := newVerifier(t, jwt.Options{KeysURL: c.from, Refresh: time.Hour, Client: client})
		err := v.Refresh(context.Background())
		if c.ok && err != nil {
			t.Errorf("redirect from %s to %s: %v", c.from, c.to, err)
		}
		if !c.ok && (err == nil || !strings.Contains(err.Error(), "redirected")) {
			t.Errorf("redirect from %s to %s: %v, want it refused", c.from, c.to, err)
		}
		v.Close()
	}
}

// A password in KeysURL (https://user:password@host/...) is sent, never
// logged nor written in an error.
func TestAPasswordInKeysURLIsNeverLogged(t *testing.T) {
	server := newKeysServer(t, nil)
	server.serve(http.StatusInternalServerError, nil)
	var log strings.Builder
	logger := slog.New(slog.NewTextHandler(&lockedWriter{w: &log}, nil))
	keysURL := strings.Replace(server.URL, "http://", "http://reader:s3cret@", 1) + "/keys"
	v := newVerifier(t, jwt.Options{KeysURL: keysURL, Refresh: time.Hour, Logger: logger})
	err := v.Refresh(context.Background())
	v.Close()
	if err == nil {
		t.Fatal("a fetch answered 500 succeeded")
	}
	if strings.Contains(err.Error(), "s3cret") || strings.Contains(log.String(), "s3cret") {
		t.Errorf("the password is written out: error %q, log %q", err, log.String())
	}
	if !strings.Contains(log.String(), "reader") {
		t.Errorf("logged %q, want the URL with its user name", log.String())
	}
}

// A KeysURL that redirects without end is given up at its 10th redirect:
// a fetch makes 10 requests at most.
func TestARedirectLoopIsGivenUp(t *testing.T) {
	var hops atomic.Int64 // the most seen in one fetch: each adds an x to the path
	loop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int64(len(r.URL.Path) - len("/keys"))
		for m := hops.Load(); n > m && !hops.CompareAndSwap(m, n); m = hops.Load() {
		}
		http.Redirect(w, r, r.URL.Path+"x", http.StatusFound)
	}))
	defer loop.Close()
	v := newVerifier(t, jwt.Options{KeysURL: loop.URL + "/keys", Refresh: time.Hour})
	err := v.Refresh(context.Background())
	if err == nil || !strings.Contains(err.Error(), "10 redirects") {
		t.Errorf("Refresh: %v, want it given up after 10 redirects", err)
	}
	if n := hops.Load(); n != 9 {
		t.Errorf("%d redirects followed, want 9 (10 requests)", n)
	}
	v.Close()
}

// A token that looked at the set in use just before a fetch put a new one
// in use, and asks for a fetch just after, within MinRefresh, is verified
// with the set fetched: it has the token's new kid, or the key replaced
// under its kid, though no fetch may begin yet.
func TestATokenOvertakenByAFetchUsesTheSetFetched(t *testing.T) {
	for _, c := range []struct {
		name     string
		old, new []byte
		tok      string
	}{
		{"a new kid", set(jwk(rsaKey(), "old")), set(jwk(rsaKey(), "old"), jwk(rsaKey2(), "new")), sign(t, jose.RS256, rsaKey2(), "new", claims())},
		{"a key replaced under its kid", set(jwk(rsaKey(), "k")), set(jwk(rsaKey2(), "k")), sign(t, jose.RS256, rsaKey2(), "k", claims())},
	} {
		t.Run(c.name, func(t *testing.T) {
			server := newKeysServer(t, c.old)
			clock := newFakeClock()
			v, err := jwt.NewPaced(jwt.Options{KeysURL: server.URL, Clock: clockAt(now), Refresh: time.Hour, MinRefresh: time.Minute, Logger: quiet}, clock.now)
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			if err := v.Refresh(context.Background()); err != nil {
				t.Fatal(err)
			}
			seen := v.SetInUse() // the token looks at the set in use
			server.serve(http.StatusOK, c.new)
			if err := v.Refresh(context.Background()); err != nil { // a fetch ends
				t.Fatal(err)
			}
			n := server.requests.Load()
			if _, err := v.VerifyTokenFrom(context.Background(), c.tok, seen); err != nil {
				t.Errorf("refused: %v", err)
			}
			if m := server.requests.Load(); m != n {
				t.Errorf("%d more requests, want none: the set in use has the key", m-n)
			}
		})
	}
}

// A secret in KeysURL's query (?access_token=…, as some identity
// providers take one) is sent, never logged nor written in an error: not
// even in net/http's error for a fetch that found no server, which names
// the URL with its query.
func TestASecretInKeysURLsQueryIsNeverLogged(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	keysURL := "http://" + l.Addr().String() + "/keys?tenant=acme&access_token=s3cret"
	l.Close() // nothing answers: the fetch fails dialing
	var log strings.Builder
	logger := slog.New(slog.NewTextHandler(&lockedWriter{w: &log}, nil))
	v := newVerifier(t, jwt.Options{KeysURL: keysURL, Refresh: time.Hour, Logger: logger})
	err = v.Refresh(context.Background())
	v.Close()
	if err == nil {
		t.Fatal("a fetch from no server succeeded")
	}
	if strings.Contains(err.Error(), "s3cret") || strings.Contains(log.String(), "s3cret") {
		t.Errorf("the query's secret is written out: error %q, log %q", err, log.String())
	}
	if !strings.Contains(err.Error(), "tenant=acme") {
		t.Errorf("error %q, want the URL with its other parameters", err)
	}
}
