package jwt_test

import (
	"log"

	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/jwt"
)

// A Verifier of the tokens an identity provider issues, fetching its keys,
// limits each client of the middleware as the user its token names.
func ExampleNew() {
	tokens, err := jwt.New(jwt.Options{
		KeysURL:   "https://id.example/.well-known/jwks.json",
		Issuer:    "https://id.example/",
		Audiences: []string{"https://api.example/"},
		PlanClaim: "plan",
	})
	if err != nil {
		log.Fatal(err)
	}
	defer tokens.Close()

	opts := httplimit.Options{Tokens: tokens}
	_ = opts // with the plans and limits, to httplimit.New
}
