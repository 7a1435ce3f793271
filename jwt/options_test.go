package jwt_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/sluice-dev/sluice/jwt"
)

func TestNewRefusesOptionsThatAreWrong(t *testing.T) {
	keys := set(jwk(edKey(), "ed"))
	for _, c := range []struct {
		name string
		o    jwt.Options
		want string // in the error: the field, and what is wrong
	}{
		{"no keys", jwt.Options{}, "Keys, KeysURL, Discover, Secret: one must be set"},
		{"Keys and Secret", jwt.Options{Keys: keys, Secret: secret}, "only one"},
		{"Keys and KeysURL", jwt.Options{Keys: keys, KeysURL: "https://id.example/keys"}, "only one"},
		{"KeysURL and Secret", jwt.Options{KeysURL: "https://id.example/keys", Secret: secret}, "only one"},
		{"short Secret", jwt.Options{Secret: secret[:31]}, "Secret: 31 bytes, at least 32"},
		{"Secret too short for HS512", jwt.Options{Secret: secret, Algorithms: []string{"HS512"}}, "Algorithms: HS512 needs a Secret of at least 64 bytes"},
		{"none", jwt.Options{Keys: keys, Algorithms: []string{"none"}}, `Algorithms: "none"`},
		{"none with Secret", jwt.Options{Secret: secret, Algorithms: []string{"HS256", "none"}}, `Algorithms: "none"`},
		{"HS256 with Keys", jwt.Options{Keys: keys, Algorithms: []string{"RS256", "HS256"}}, "Algorithms: HS256 cannot be accepted with Keys"},
		{"HS256 with KeysURL", jwt.Options{KeysURL: "https://id.example/keys", Algorithms: []string{"HS256"}}, "Algorithms: HS256"},
		{"RS256 with Secret", jwt.Options{Secret: secret, Algorithms: []string{"HS256", "RS256"}}, "Algorithms: RS256 cannot be accepted with Secret"},
		{"unknown alg", jwt.Options{Keys: keys, Algorithms: []string{"ES256K"}}, `Algorithms: "ES256K" is not one of`},
		{"lower-case alg", jwt.Options{Keys: keys, Algorithms: []string{"rs256"}}, `Algorithms: "rs256"`},
		{"http to another host", jwt.Options{KeysURL: "http://id.example/keys"}, "KeysURL: \"http://id.example/keys\": http:// only to a loopback host"},
		{"http to a private address", jwt.Options{KeysURL: "http://10.0.0.1/keys"}, "KeysURL"},
		{"http to a name like localhost", jwt.Options{KeysURL: "http://localhost.evil.example/keys"}, "KeysURL"},
		{"no scheme", jwt.Options{KeysURL: "id.example/keys"}, "KeysURL"},
		{"another scheme", jwt.Options{KeysURL: "file:///etc/keys.json"}, "KeysURL"},
		{"https without a host", jwt.Options{KeysURL: "https:///keys"}, "KeysURL"},
		{"not a URL", jwt.Options{KeysURL: "https://id.example/%zz"}, "KeysURL"},
		{"Keys not a JWK Set", jwt.Options{Keys: []byte(`[]`)}, "Keys: not a JWK Set"},
		{"Keys without usable key", jwt.Options{Keys: []byte(`{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}`)}, "Keys: no usable key"},
		{"empty audience", jwt.Options{Keys: keys, Audiences: []string{"api", ""}}, "Audiences: [1] is empty"},
		{"negative Leeway", jwt.Options{Keys: keys, Leeway: -time.Second}, "Leeway: negative"},
		{"Leeway beyond 10 minutes", jwt.Options{Keys: keys, Leeway: 24 * time.Hour}, "Leeway: 24h0m0s is more than clocks disagree by: at most 10m0s"},
		{"negative Refresh", jwt.Options{KeysURL: "https://id.example/keys", Refresh: -1}, "Refresh: negative"},
		{"negative MinRefresh", jwt.Options{KeysURL: "https://id.example/keys", MinRefresh: -1}, "MinRefresh: negative"},
		{"SubjectPrefix with a space", jwt.Options{Keys: keys, SubjectPrefix: "svc "}, "SubjectPrefix: \"svc \": at most 64 bytes of printable ASCII"},
		{"SubjectPrefix with a newline", jwt.Options{Keys: keys, SubjectPrefix: "svc\n"}, "SubjectPrefix"},
		{"SubjectPrefix not ASCII", jwt.Options{Keys: keys, SubjectPrefix: "sérvice."}, "SubjectPrefix"},
		{"SubjectPrefix too long", jwt.Options{Keys: keys, SubjectPrefix: strings.Repeat("s", 65)}, "SubjectPrefix"},
	} {
		t.Run(c.name, func(t *testing.T) {
			v, err := jwt.New(c.o)
			if err == nil {
				v.Close()
				t.Fatal("accepted")
			}
			if !strings.HasPrefix(err.Error(), "jwt: ") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q, want one saying %q", err, c.want)
			}
			if verr := c.o.Validate(); verr == nil || verr.Error() != err.Error() {
				t.Errorf("Validate: %v, want New's error %q", verr, err)
			}
		})
	}
}

func TestNewAcceptsLoopbackHTTPAndHTTPS(t *testing.T) {
	for _, u := range []string{
		"https://id.example/.well-known/jwks.json",
		"https://id.example:8443/keys",
		"http://127.0.0.1:8080/keys",
		"http://127.1.2.3/keys",
		"http://[::1]:8080/keys",
		"http://localhost/keys",
		"http://LOCALHOST:9000/keys",
		"http://0.0.0.0:8080/keys",
		"http://[::]:8080/keys",
		"http://[::ffff:127.0.0.1]:8080/keys",
	} {
		// The background fetch fails without a network, and Close ends it.
		o := jwt.Options{KeysURL: u, Logger: quiet, Client: offline}
		if err := o.Validate(); err != nil {
			t.Errorf("%s: Validate: %v", u, err)
		}
		v, err := jwt.New(o)
		if err != nil {
			t.Errorf("%s: %v", u, err)
			continue
		}
		v.Close()
	}
}

// offline is a client that fails every request, without a network.
var offline = &http.Client{Transport: roundTripper(func(*http.Request) (*http.Response, error) {
	return nil, errors.New("offline")
})}

func TestNewTakesTheAlgorithmsListed(t *testing.T) {
	long := []byte(strings.Repeat("k", 64))
	for _, c := range []struct {
		name string
		o    jwt.Options
	}{
		{"HS256 only", jwt.Options{Secret: long, Algorithms: []string{"HS256"}}},
		{"every HMAC with a long Secret", jwt.Options{Secret: long, Algorithms: []string{"HS256", "HS384", "HS512"}}},
		{"EdDSA only", jwt.Options{Keys: set(jwk(edKey(), "ed")), Algorithms: []string{"EdDSA", "EdDSA"}}},
	} {
		if _, err := jwt.New(c.o); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		if err := c.o.Validate(); err != nil {
			t.Errorf("%s: Validate: %v", c.name, err)
		}
	}
}

func TestATokenOfAnAlgNotListedIsMalformed(t *testing.T) {
	v := newVerifier(t, jwt.Options{Keys: set(jwk(rsaKey(), "rsa"), jwk(edKey(), "ed")), Algorithms: []string{"EdDSA"}})
	verify(t, v, sign(t, jose.EdDSA, edKey(), "ed", claims()))
	_, err := v.VerifyToken(context.Background(), sign(t, jose.RS256, rsaKey(), "rsa", claims()))
	wantClass(t, err, jwt.ErrMalformed)
}
