package config_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// A key's plan that is not one, and a key configured twice, are reported
// at the value that says so (plan:, the second sha256:), not at the
// entry's first line, which in a key written over several lines is its
// name's.
func TestKeyErrorsPointAtTheirValue(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	const hash = "9f8cfdb17116bf0e2a44e071454f25594cb9b8737bf331e6a2f0b30550572f29"
	for _, c := range []struct{ keys, want string }{
		{"keys:\n  - name: acme\n    sha256: " + hash + "\n    plan: gold\n",
			`k.yaml:6:11: keys[0].plan: "gold" is not a plan (plans: free)`},
		{"keys:\n  - name: acme\n    sha256: " + hash + "\n  - name: globex\n    sha256: " + hash + "\n",
			`k.yaml:7:13: keys[1].sha256: the same key is configured twice (keys[0], line 5)`},
	} {
		_, err := config.Parse("k.yaml", []byte(plans+c.keys))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s\nerror %v\nwant %s", c.keys, err, c.want)
		}
	}
}
