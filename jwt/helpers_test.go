package jwt_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	josejwt "github.com/go-jose/go-jose/v4/jwt"
	"go.uber.org/goleak"

	"github.com/sluice-dev/sluice/jwt"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// now is the time the tests judge tokens at (Options.Clock).
var now = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

func clockAt(t time.Time) func() time.Time { return func() time.Time { return t } }

// quiet is a logger of the failed fetches that tests cause on purpose.
var quiet = slog.New(slog.DiscardHandler)

// secret is an HMAC key of 32 bytes.
var secret = []byte("0123456789abcdef0123456789abcdef")

// The tests' keys, generated once: RSA takes a while.
var (
	rsaKey  = sync.OnceValue(func() *rsa.PrivateKey { return must(rsa.GenerateKey(rand.Reader, 2048)) })
	rsaKey2 = sync.OnceValue(func() *rsa.PrivateKey { return must(rsa.GenerateKey(rand.Reader, 2048)) })
	ecKey   = sync.OnceValue(func() *ecdsa.PrivateKey { return must(ecdsa.GenerateKey(elliptic.P256(), rand.Reader)) })
	edKey   = sync.OnceValue(func() ed25519.PrivateKey {
		_, k, err := ed25519.GenerateKey(rand.Reader)
		return must(k, err)
	})
)

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// claims are a token's claims: sub "alice", plan "pro", exp an hour after
// now, changed by the pairs given (a nil value deletes the claim).
func claims(kv ...any) map[string]any {
	c := map[string]any{"sub": "alice", "plan": "pro", "exp": now.Add(time.Hour).Unix()}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(c, kv[i].(string))
		} else {
			c[kv[i].(string)] = kv[i+1]
		}
	}
	return c
}

// sign returns a compact JWT of c signed with key under alg, its header
// naming kid unless kid is empty.
func sign(t testing.TB, alg jose.SignatureAlgorithm, key any, kid string, c map[string]any) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if kid != "" {
		opts = opts.WithHeader("kid", kid)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := josejwt.Signed(s).Claims(c).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// jwk returns the JWK of key's public part, of kid.
func jwk(key any, kid string) jose.JSONWebKey {
	k := jose.JSONWebKey{Key: key, KeyID: kid}
	return k.Public()
}

// set returns the JWK Set document of keys.
func set(keys ...jose.JSONWebKey) []byte {
	return must(json.Marshal(jose.JSONWebKeySet{Keys: keys}))
}

// newVerifier returns a Verifier of o judging tokens at now, closed when
// the test ends.
func newVerifier(t testing.TB, o jwt.Options) *jwt.Verifier {
	t.Helper()
	if o.Clock == nil {
		o.Clock = clockAt(now)
	}
	if o.Logger == nil {
		o.Logger = quiet
	}
	v, err := jwt.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	return v
}

// keysServer serves a JWK Set and counts the requests for it.
type keysServer struct {
	*httptest.Server
	requests atomic.Int64
	mu       sync.Mutex
	body     []byte
	status   int
	accept   string        // the Accept header of the last request
	delay    time.Duration // before each answer
}

func newKeysServer(t testing.TB, body []byte) *keysServer {
	s := &keysServer{body: body, status: http.StatusOK}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		s.mu.Lock()
		body, status, delay := s.body, s.status, s.delay
		s.accept = r.Header.Get("Accept")
		s.mu.Unlock()
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(body)
	}))
	t.Cleanup(s.Close)
	return s
}

// setDelay makes the server wait d before each answer from now on.
func (s *keysServer) setDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// lastAccept returns the Accept header of the latest request.
func (s *keysServer) lastAccept() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accept
}

// serve makes the server answer status and body from now on.
func (s *keysServer) serve(status int, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status, s.body = status, body
}

// fetches records what Options.OnFetch is told.
type fetches struct {
	mu   sync.Mutex
	keys []int
	errs []error
}

func (f *fetches) on(keys int, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.keys = append(f.keys, keys)
	f.errs = append(f.errs, err)
}

// last returns the latest report and how many there were.
func (f *fetches) last() (keys int, err error, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.keys) == 0 {
		return 0, nil, 0
	}
	return f.keys[len(f.keys)-1], f.errs[len(f.errs)-1], len(f.keys)
}

// fakeClock is a clock moved by hand, safe for concurrent use.
type fakeClock struct{ ns atomic.Int64 }

func (c *fakeClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) advance(d time.Duration) { c.ns.Add(int64(d)) }
func newFakeClock() *fakeClock               { c := &fakeClock{}; c.ns.Store(now.UnixNano()); return c }

// classes are the error classes of VerifyToken.
var classes = []error{jwt.ErrMalformed, jwt.ErrKey, jwt.ErrSignature, jwt.ErrExpired, jwt.ErrClaims}

// wantClass fails the test unless err wraps want and no other class.
func wantClass(t testing.TB, err, want error) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted, want %v", want)
	}
	for _, c := range classes {
		if errors.Is(err, c) != (c == want) {
			t.Fatalf("error %q: errors.Is(%v) = %v", err, c, errors.Is(err, c))
		}
	}
}

// verify verifies tok with v and fails the test unless it is accepted.
func verify(t testing.TB, v *jwt.Verifier, tok string) {
	t.Helper()
	if _, err := v.VerifyToken(context.Background(), tok); err != nil {
		t.Fatalf("refused: %v", err)
	}
}

// rsaKeyOfBits returns a new RSA key of bits; below 2048 only for keys a
// Verifier must refuse.
func rsaKeyOfBits(bits int) (*rsa.PrivateKey, error) {
	return rsa.GenerateKey(rand.Reader, bits)
}
