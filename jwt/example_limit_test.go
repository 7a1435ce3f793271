package jwt_test

import (
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/jwt"
	"github.com/sluice-dev/sluice/memory"
)

// Each client is limited as the user its token names: alice's two requests
// a minute are hers, whoever else calls, and a token that does not verify
// is limited by its address.
func Example_limitByToken() {
	secret := []byte("a-secret-shared-with-the-issuer-32b")
	tokens, err := jwt.New(jwt.Options{Secret: secret, Issuer: "https://id.example/"})
	if err != nil {
		log.Fatal(err)
	}
	defer tokens.Close()
	store := memory.New()
	defer store.Close()
	mw, err := httplimit.New(sluice.NewLimiter(store), httplimit.Options{
		Plans:  []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.PerMinute(2)}}},
		Tokens: tokens,
	})
	if err != nil {
		log.Fatal(err)
	}
	api := mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))

	sign := func(key []byte, sub string) string {
		signer, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: key}, nil)
		claims, _ := json.Marshal(map[string]any{"iss": "https://id.example/", "sub": sub, "exp": time.Now().Add(time.Hour).Unix()})
		jws, _ := signer.Sign(claims)
		token, _ := jws.CompactSerialize()
		return token
	}
	send := func(token string) {
		r := httptest.NewRequest("GET", "/v1/items", nil)
		r.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		api.ServeHTTP(w, r)
		fmt.Println(w.Code, w.Header().Get("RateLimit"))
	}
	alice, bob := sign(secret, "alice"), sign(secret, "bob")
	forged := sign([]byte("not-the-issuers-secret-of-32-bytes"), "alice")
	send(alice)
	send(alice)
	send(alice)
	send(bob)
	send(forged)
	// Output:
	// 200 "per-minute";r=1;t=30
	// 200 "per-minute";r=0;t=30
	// 429 "per-minute";r=0;t=30
	// 200 "per-minute";r=1;t=30
	// 200 "per-minute";r=1;t=30
}
