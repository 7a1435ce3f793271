package config_test

import (
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// An empty list written for identity.api_key_headers, identity.token_headers
// or response.headers loaded as the default it is read as (Authorization
// and X-API-Key; Authorization; ietf): a file that says to read API keys
// from no header read them from two, and one that says to send no RateLimit
// header sent the IETF ones. Each is refused at its line, saying what it
// would be read as.
func TestAnEmptyListThatReadsAsTheDefaultIsRefused(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	for _, c := range []struct{ yaml, want string }{
		{"identity: {api_key_headers: []}\n",
			`e.yaml:3:29: identity.api_key_headers: an empty list is read as the default, Authorization then X-API-Key: list the headers that carry API keys, or leave api_key_headers out`},
		{"identity: {token_headers: [], jwt: {jwks_url: \"https://a.example/k\"}}\n",
			`e.yaml:3:27: identity.token_headers: an empty list is read as the default, Authorization: list the headers that carry tokens, or leave token_headers out`},
		{"response: {headers: []}\n",
			`e.yaml:3:21: response.headers: an empty list is read as the default, ietf: RateLimit headers are always sent (response.hide leaves limits out of them); list the modes, or leave headers out`},
	} {
		_, err := config.Parse("e.yaml", []byte(plans+c.yaml))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n%v\nwant exactly:\n%s", c.yaml, err, c.want)
		}
	}
}
