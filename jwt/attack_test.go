package jwt_test

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"strings"
	"testing"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/sluice-dev/sluice/jwt"
)

// b64 is base64url without padding, as JWS parts are.
func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// payload returns the JSON of c, base64url.
func payload(c map[string]any) string { return b64(string(must(json.Marshal(c)))) }

func TestAlgNoneIsRefused(t *testing.T) {
	rsaV := newVerifier(t, jwt.Options{Keys: set(jwk(rsaKey(), "rsa"))})
	hsV := newVerifier(t, jwt.Options{Secret: secret})
	body := payload(claims())
	for _, header := range []string{
		`{"alg":"none","typ":"JWT"}`,
		`{"alg":"none","kid":"rsa"}`,
		`{"alg":"None"}`,
		`{"alg":"NONE"}`,
		`{"typ":"JWT"}`,
		`{"alg":""}`,
	} {
		for _, sig := range []string{"", b64("x")} {
			tok := b64(header) + "." + body + "." + sig
			for _, v := range []*jwt.Verifier{rsaV, hsV} {
				_, err := v.VerifyToken(context.Background(), tok)
				wantClass(t, err, jwt.ErrMalformed)
			}
		}
	}
}

// An HS256 token whose HMAC key is the issuer's public key, which anyone
// has, must not verify against that public key.
func TestAlgorithmConfusionIsRefused(t *testing.T) {
	pub := &rsaKey().PublicKey
	der := must(x509.MarshalPKIXPublicKey(pub))
	forged := map[string][]byte{
		"PEM":       pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}),
		"DER":       der,
		"PKCS1 PEM": pem.EncodeToMemory(&pem.Block{Type: "RSA PUBLIC KEY", Bytes: x509.MarshalPKCS1PublicKey(pub)}),
		"JWK":       must(json.Marshal(jwk(rsaKey(), "rsa"))),
	}
	server := newKeysServer(t, set(jwk(rsaKey(), "rsa")))
	fixed := newVerifier(t, jwt.Options{Keys: set(jwk(rsaKey(), "rsa"))})
	fetched := newVerifier(t, jwt.Options{KeysURL: server.URL})
	if err := fetched.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	for name, key := range forged {
		for _, alg := range []jose.SignatureAlgorithm{jose.HS256, jose.HS384, jose.HS512} {
			if len(key)*8 < 512 && alg == jose.HS512 {
				continue // go-jose will not sign with it
			}
			for _, kid := range []string{"rsa", ""} {
				tok := sign(t, alg, key, kid, claims())
				for _, v := range []*jwt.Verifier{fixed, fetched} {
					_, err := v.VerifyToken(context.Background(), tok)
					if err == nil {
						t.Fatalf("%s %s token keyed with the public key's %s accepted", alg, kid, name)
					}
					wantClass(t, err, jwt.ErrMalformed)
				}
			}
		}
	}
	// Nor can a JWK Set slip in a symmetric key.
	oct := jose.JSONWebKey{Key: der, KeyID: "oct", Algorithm: "HS256"}
	if _, err := jwt.New(jwt.Options{Keys: set(oct)}); err == nil {
		t.Error("a JWK Set of a symmetric key only was accepted")
	}
	// And no Verifier takes both kinds of algorithm.
	if _, err := jwt.New(jwt.Options{Keys: set(jwk(rsaKey(), "rsa")), Algorithms: []string{"RS256", "HS256"}}); err == nil {
		t.Error("Keys with HS256 among the Algorithms was accepted")
	}
}

func TestATamperedTokenDoesNotVerify(t *testing.T) {
	for _, c := range []struct {
		name string
		o    jwt.Options
		tok  string
	}{
		{"RS256", jwt.Options{Keys: set(jwk(rsaKey(), "rsa"))}, sign(t, jose.RS256, rsaKey(), "rsa", claims())},
		{"ES256", jwt.Options{Keys: set(jwk(ecKey(), "ec"))}, sign(t, jose.ES256, ecKey(), "ec", claims())},
		{"EdDSA", jwt.Options{Keys: set(jwk(edKey(), "ed"))}, sign(t, jose.EdDSA, edKey(), "ed", claims())},
		{"HS256", jwt.Options{Secret: secret}, sign(t, jose.HS256, secret, "", claims())},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := newVerifier(t, c.o)
			verify(t, v, c.tok)
			parts := strings.Split(c.tok, ".")
			payloadSwapped := parts[0] + "." + payload(claims("sub", "mallory")) + "." + parts[2]
			_, err := v.VerifyToken(context.Background(), payloadSwapped)
			wantClass(t, err, jwt.ErrSignature)

			sig := []byte(must(base64.RawURLEncoding.DecodeString(parts[2])))
			sig[len(sig)/2] ^= 1
			sigFlipped := parts[0] + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString(sig)
			_, err = v.VerifyToken(context.Background(), sigFlipped)
			wantClass(t, err, jwt.ErrSignature)
		})
	}
}

func TestATokenIsNotCheckedWithAKeyOfAnotherType(t *testing.T) {
	v := newVerifier(t, jwt.Options{Keys: set(jwk(edKey(), "ed"), jwk(ecKey(), "ec"))})
	// RS256 is accepted, but the set has no RSA key.
	_, err := v.VerifyToken(context.Background(), sign(t, jose.RS256, rsaKey(), "ed", claims()))
	wantClass(t, err, jwt.ErrKey)
	_, err = v.VerifyToken(context.Background(), sign(t, jose.RS256, rsaKey(), "", claims()))
	wantClass(t, err, jwt.ErrKey)
}

func TestJunkIsMalformed(t *testing.T) {
	v := newVerifier(t, jwt.Options{Keys: set(jwk(edKey(), "ed"))})
	good := sign(t, jose.EdDSA, edKey(), "ed", claims())
	for _, tok := range []string{
		"",
		"a.b",
		"a.b.c.d",
		"...",
		good + ".",
		"." + good,
		strings.Repeat("a", 16<<10+1),
		good[:strings.LastIndex(good, ".")] + "." + strings.Repeat("A", 16<<10),
		b64(`{"alg":"EdDSA","kid":"ed"}`) + ".%%%." + b64("sig"),
		b64(`not json`) + "." + payload(claims()) + "." + b64("sig"),
		`{"payload":"x","signatures":[]}`,
	} {
		_, err := v.VerifyToken(context.Background(), tok)
		wantClass(t, err, jwt.ErrMalformed)
	}
}

// Base64url has no line breaks: a token with one inside a part is not in
// compact form, whatever decoders that skip them would make of it.
func TestLineBreaksInsideATokenAreMalformed(t *testing.T) {
	v := newVerifier(t, jwt.Options{Keys: set(jwk(edKey(), "ed"))})
	good := sign(t, jose.EdDSA, edKey(), "ed", claims())
	verify(t, v, good)
	parts := strings.Split(good, ".")
	for i := range parts {
		for _, brk := range []string{"\n", "\r", "\r\n"} {
			p := append([]string(nil), parts...)
			p[i] = p[i][:4] + brk + p[i][4:]
			_, err := v.VerifyToken(context.Background(), strings.Join(p, "."))
			wantClass(t, err, jwt.ErrMalformed)
		}
	}
}
