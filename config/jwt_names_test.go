package config_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// An issuer's name labels its lines in the log (its key fetches, its
// failures): two issuers of one name, written or given by position ("2"
// for the second without one), are refused at the second.
func TestTwoIssuersOfOneNameAreRefused(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"identity:\n  jwt:\n    - {name: idp, jwks_url: \"https://a.example/k\", issuer: a}\n    - {name: idp, jwks_url: \"https://b.example/k\", issuer: b}\n",
			`bad.yaml:4:7: identity.jwt[1].name: "idp" is already the name of identity.jwt[0]: give each issuer a name of its own`},
		{"identity:\n  jwt:\n    - {name: \"2\", jwks_url: \"https://a.example/k\", issuer: a}\n    - {jwks_url: \"https://b.example/k\", issuer: b}\n",
			`bad.yaml:4:7: identity.jwt[1].name: "2" is already the name of identity.jwt[0]: give each issuer a name of its own`},
	} {
		_, err := config.Parse("bad.yaml", []byte(c.yaml+jwtPlans))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error:\n%v\nwant it to contain:\n%s", err, c.want)
		}
	}
}
