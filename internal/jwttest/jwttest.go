// Package jwttest signs JSON Web Tokens for tests: the tokens an identity
// provider would issue, or forge, for the packages that verify them.
package jwttest

import (
	"encoding/json"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
)

// Sign returns the compact JWT of claims signed with key by alg, its header
// naming kid unless kid is empty. It fails tb on any error.
func Sign(tb testing.TB, alg jose.SignatureAlgorithm, key any, kid string, claims map[string]any) string {
	tb.Helper()
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if kid != "" {
		opts = opts.WithHeader("kid", kid)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	if err != nil {
		tb.Fatal(err)
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		tb.Fatal(err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		tb.Fatal(err)
	}
	token, err := jws.CompactSerialize()
	if err != nil {
		tb.Fatal(err)
	}
	return token
}
