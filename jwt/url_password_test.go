package jwt_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/jwt"
)

// Validate's error about a KeysURL or an Issuer never shows the URL's
// password, whatever url.Parse makes of it: the URL is named without it,
// and url.Parse's reason without what it quotes of the URL (an escape
// "%se", a port ":hunter2" read from a password holding a "/").
func TestAnURLsPasswordIsNeverInValidatesError(t *testing.T) {
	for _, c := range []struct {
		name string
		o    jwt.Options
		want string
	}{
		{"an escape url.Parse refuses", jwt.Options{KeysURL: "https://idp:hunter2%secret@idp.example.com/keys"},
			`jwt: KeysURL: "https://idp:xxxxx@idp.example.com/keys" is not a URL: invalid URL escape`},
		{"a password url.Parse reads a port of", jwt.Options{KeysURL: "https://idp:hunter2/secret@idp.example.com/keys"},
			`jwt: KeysURL: "https://idp:xxxxx@idp.example.com/keys" is not a URL: invalid port`},
		{"a character userinfo may not hold", jwt.Options{KeysURL: "http://idp:hunter2^secret@idp.example.com/keys"},
			`jwt: KeysURL: "http://idp:xxxxx@idp.example.com/keys" is not a URL: net/url: invalid userinfo`},
		{"a password url.Parse reads a port and a path of", jwt.Options{KeysURL: "http://idp:123/hunter2@idp.example.com/keys"},
			`jwt: KeysURL: "http://idp:xxxxx@idp.example.com/keys": http:// only to a loopback host (127.0.0.0/8, ::1, 0.0.0.0, ::, localhost); use https://`},
		{"an issuer with a query", jwt.Options{Discover: true, Issuer: "https://idp:hunter2@idp.example.com/?tenant=1"},
			`jwt: Issuer: with Discover: "https://idp:xxxxx@idp.example.com/?tenant=1" has a query or a fragment, which an issuer never has (OpenID Connect Discovery 1.0, section 3)`},
	} {
		err := c.o.Validate()
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n%v\nwant exactly:\n%s", c.name, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: the error shows the password: %v", c.name, err)
		}
	}
}
