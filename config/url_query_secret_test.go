package config_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// A notify.url, jwks_url, issuer or Redis address refused for any reason
// is named in the error without a secret its query carries (a webhook's
// ?token=, a JWK Set's ?access_token=, a Redis URL's ?password=), which
// sluice check prints and sluice serve logs on each refused reload; the
// query's other parameters stay readable.
func TestARefusedURLNeverShowsASecretOfItsQuery(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: per-month, algorithm: fixed-window, quantity: 10, window: 30d}]}\n"
	for _, c := range []struct{ name, text, want string }{
		{"notify http to a remote host", "notify: {url: \"http://hooks.example.com/x?v=2&token=hunter2secret\", limits: [per-month]}\n",
			`v.yaml:3:15: notify.url: "http://hooks.example.com/x?v=2&token=xxxxx" is not an https:// URL (http:// only to a loopback host)`},
		{"notify bad escape in its path", "notify: {url: \"https://hooks.example.com/x%zz?sig=hunter2%secret\", limits: [per-month]}\n",
			`v.yaml:3:15: notify.url: "https://hooks.example.com/x%zz?sig=xxxxx" is not an https:// URL (http:// only to a loopback host)`},
		{"jwks_url bad escape in its path", "identity:\n  jwt: {jwks_url: \"https://idp.example.com/k%zz?tenant=a&access_token=hunter2%secret\"}\n", ""},
		{"jwks_url without a host", "identity:\n  jwt: {jwks_url: \"https:///keys?api_key=hunter2secret\"}\n", ""},
		{"issuer with a query", "identity:\n  jwt: {discover: true, issuer: \"https://idp.example.com/?client_secret=hunter2secret\"}\n", ""},
		{"a Redis address whose host holds a password", "store:\n  type: redis\n  redis:\n    addresses: [\"hunter2secret@r.example:6379\"]\n",
			`v.yaml:6:17: store.redis.addresses[0]: "xxxxx@r.example:6379" is not a host:port address (e.g. redis.internal:6379): ` +
				"write the host and port alone, the user in username and the password in a file named by password_file"},
		{"a Redis address whose host holds a query", "store:\n  type: redis\n  redis:\n    addresses: [\"r.example?password=hunter2secret:6379\"]\n",
			`v.yaml:6:17: store.redis.addresses[0]: "r.example?…" is not a host:port address (e.g. redis.internal:6379): ` +
				"write the host and port alone, each setting of the query in its field, the password in a file named by password_file"},
	} {
		_, err := config.Parse("v.yaml", []byte(plans+c.text))
		if err == nil {
			t.Errorf("%s: loaded; want a refusal", c.name)
			continue
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: the error shows the secret: %v", c.name, err)
		}
		if c.want != "" && err.Error() != c.want {
			t.Errorf("%s:\n%v\nwant exactly:\n%s", c.name, err, c.want)
		}
	}
}
