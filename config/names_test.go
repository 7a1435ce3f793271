package config_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// The names that logs, check's tables and the dashboard show, a caller's,
// a key's and an issuer's, hold no control character: a line break in one
// would split a log line or a table row, and could forge a line of its own.
func TestNamesHoldNoControlCharacter(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\ndefault_plan: free\n"
	hash := strings.Repeat("ab", 32)
	for name, c := range map[string]struct{ yaml, want string }{
		"caller": {"admin:\n  callers:\n    - {name: \"ops\\nWARN forged\", token_sha256: " + hash + ", scopes: [admin]}\n",
			`c.yaml:6:14: admin.callers[0].name: "ops\nWARN forged" holds a control character`},
		"key": {"keys:\n  - {name: \"acme\\tx\", sha256: " + hash + ", plan: free}\n",
			`c.yaml:5:12: keys[0].name: "acme\tx" holds a control character`},
		"issuer": {"identity:\n  jwt:\n    - {name: \"a\\rb\", jwks_url: \"https://id.example/keys\", issuer: \"https://id.example\", audiences: [api]}\n",
			`c.yaml:6:14: identity.jwt[0].name: "a\rb" holds a control character`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := config.Parse("c.yaml", []byte(plans+c.yaml))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want %s", err, c.want)
			}
		})
	}
	if _, err := config.Parse("c.yaml", []byte(plans+"keys:\n  - {name: \"Société Générale\", sha256: "+hash+", plan: free}\n")); err != nil {
		t.Errorf("a name of printable characters, not all ASCII: %v", err)
	}
}
