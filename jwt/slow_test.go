package jwt_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"net/http"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/sluice-dev/sluice/jwt"
)

// While a fetch of the set hangs (the issuer is slow), a token of a key in
// use is answered at once, without waiting for it; one that needs the set
// fetched again (an unknown kid, a signature no key verifies) waits no
// longer than the Client's timeout, even with a context that never ends.
func TestAHangingFetchHoldsTokensNoLongerThanTheClientsTimeout(t *testing.T) {
	server := newKeysServer(t, set(jwk(edKey(), "ed")))
	const timeout = 300 * time.Millisecond
	v := newVerifier(t, jwt.Options{KeysURL: server.URL, Refresh: time.Hour, MinRefresh: time.Nanosecond,
		Client: &http.Client{Timeout: timeout}, Logger: quiet})
	if err := v.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	server.setDelay(time.Hour)
	go v.Refresh(context.Background()) // hangs until the Client's timeout
	waitFor(t, "the hanging fetch", func() bool { return server.requests.Load() == 3 })

	begin := time.Now()
	verify(t, v, sign(t, jose.EdDSA, edKey(), "ed", claims()))
	if took := time.Since(begin); took > timeout/3 {
		t.Errorf("a token of a key in use took %v while a fetch hung", took)
	}
	_, other, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	for name, tok := range map[string]string{
		"unknown kid":   sign(t, jose.EdDSA, edKey(), "other", claims()),
		"bad signature": sign(t, jose.EdDSA, other, "ed", claims()),
	} {
		begin := time.Now()
		_, err := v.VerifyToken(context.Background(), tok)
		if took := time.Since(begin); err == nil || took > 3*timeout {
			t.Errorf("%s: %v after %v, want an error within %v", name, err, took, 3*timeout)
		}
	}
}
