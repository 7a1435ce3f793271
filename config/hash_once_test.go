package config_test

import (
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// A key's sha256 or a caller's token_sha256 that is no string (nothing, a
// list) is one problem, told once: it was told twice at the same place,
// "want a string, got nothing" and then "want the 64 hex digits …, got 0
// characters".
func TestAHashThatIsNoStringIsOneError(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	for _, c := range []struct{ yaml, want string }{
		{"keys: [{sha256: ~}]\n", `h.yaml:3:17: keys[0].sha256: want a string, got nothing`},
		{"keys: [{sha256: [ab]}]\n", `h.yaml:3:17: keys[0].sha256: want a string, got a list`},
		{"admin: {callers: [{name: ci, token_sha256: ~, scopes: [check]}]}\n", `h.yaml:3:44: admin.callers[0].token_sha256: want a string, got nothing`},
	} {
		_, err := config.Parse("h.yaml", []byte(plans+c.yaml))
		if errs := config.Errors(err); len(errs) != 1 || err.Error() != c.want {
			t.Errorf("%s: %d errors:\n%v\nwant exactly:\n%s", c.yaml, len(errs), err, c.want)
		}
	}
}
