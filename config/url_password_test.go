package config_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// An upstream, notify.url, identity.jwt jwks_url or issuer, or CORS
// origin that carries a password and is refused for any reason (a scheme
// that is not served or left out, no host, an escape or a character
// url.Parse does not read in the user information, plain http to a host
// that is not loopback) is named in the error without its password
// (redact.URL): sluice check prints the error, and sluice serve logs it on
// each refused reload.
func TestARefusedURLNeverShowsItsPassword(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: per-month, algorithm: fixed-window, quantity: 10, window: 30d}]}\n"
	for _, c := range []struct{ name, text string }{
		{"upstream wrong scheme", "upstream: \"ftp://deploy:hunter2secret@api.internal:8080\"\n"},
		{"upstream no host", "upstream: \"https://deploy:hunter2secret@:8443/\"\n"},
		{"upstream without its scheme", "upstream: \"deploy:hunter2secret@api.internal:8080\"\n"},
		{"upstream bad escape", "upstream: \"https://deploy:hunter2%secret@api.internal\"\n"},
		{"notify http to a remote host", "notify: {url: \"http://billing:hunter2secret@billing.example.com/hook\", limits: [per-month]}\n"},
		{"notify bad escape", "notify: {url: \"https://billing:hunter2%secret@billing.example.com/hook\", limits: [per-month]}\n"},
		{"jwks_url bad escape", "identity:\n  jwt: {jwks_url: \"https://idp:hunter2%secret@idp.example.com/keys\"}\n"},
		{"jwks_url userinfo url.Parse refuses", "identity:\n  jwt: {jwks_url: \"http://idp:hunter2^secret@idp.example.com/keys\"}\n"},
		{"jwks_url password url.Parse reads a port of", "identity:\n  jwt: {jwks_url: \"https://idp:hunter2/secret@idp.example.com/keys\"}\n"},
		{"issuer with a query", "identity:\n  jwt: {discover: true, issuer: \"https://idp:hunter2@idp.example.com/?tenant=1\"}\n"},
		{"cors origin with credentials", "cors: {origins: [\"https://app:hunter2@app.example.com\"]}\n"},
	} {
		_, err := config.Parse("v.yaml", []byte(plans+c.text))
		if err == nil {
			t.Errorf("%s: loaded; want a refusal", c.name)
			continue
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: the error shows the password: %v", c.name, err)
		}
	}
}

// The URL a refusal names keeps all but the password, as written.
func TestARefusedURLIsNamedWithItsUserAndWithoutItsPassword(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: per-month, algorithm: fixed-window, quantity: 10, window: 30d}]}\n"
	for _, c := range []struct{ text, want string }{
		{"upstream: \"deploy:hunter2secret@api.internal:8080\"\n",
			`v.yaml:3:11: upstream: "deploy:xxxxx@api.internal:8080" is not an http://, https:// or h2c:// URL`},
		{"upstream: \"https://deploy:hunter2%secret@api.internal\"\n",
			`v.yaml:3:11: upstream: "https://deploy:xxxxx@api.internal" is not an http://, https:// or h2c:// URL`},
		{"notify: {url: \"http://billing:hunter2secret@billing.example.com/hook\", limits: [per-month]}\n",
			`v.yaml:3:15: notify.url: "http://billing:xxxxx@billing.example.com/hook" is not an https:// URL (http:// only to a loopback host)`},
	} {
		_, err := config.Parse("v.yaml", []byte(plans+c.text))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n%v\nwant exactly:\n%s", c.text, err, c.want)
		}
	}
}
