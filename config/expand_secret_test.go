package config_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// A value refused as an environment variable is never quoted in the
// error: it may be the secret itself ($Xk9_aB2vQ7 is a password a
// generator writes as well as a variable), which sluice check prints and
// sluice serve logs on a reload it refuses. The error names the field, at
// its line, and why.
func TestARefusedVariableIsNotShownInTheError(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	const redis = "store:\n  type: redis\n  redis:\n    addresses: [\"r:6379\"]\n"
	for _, c := range []struct{ name, yaml, want string }{
		{"a password of $ and letters", redis + "    password: $Xk9_aB2vQ7\n",
			"v.yaml:7:15: store.redis.password: environment variables are not expanded, and a whole value of $ and a name is taken for one"},
		{"a Sentinel password", redis + "    mode: sentinel\n    master_name: m\n    sentinel_password: \"$Xk9_aB2vQ7\"\n",
			"v.yaml:9:24: store.redis.sentinel_password: environment variables are not expanded, and a whole value of $ and a name is taken for one"},
		{"a password holding ${…}", redis + "    password: \"Xk9${aB2}vQ7\"\n",
			"v.yaml:7:15: store.redis.password: environment variables (${NAME}) are not expanded"},
		{"an upstream's password", "upstream: \"http://ops:Xk9${aB2}vQ7@api.internal\"\n",
			"v.yaml:3:11: upstream: environment variables (${NAME}) are not expanded"},
	} {
		_, err := config.Parse("v.yaml", []byte(plans+c.yaml))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v, want %s", c.name, err, c.want)
		}
		if err != nil && (strings.Contains(err.Error(), "Xk9") || strings.Contains(err.Error(), "vQ7")) {
			t.Errorf("%s: the error shows the value: %v", c.name, err)
		}
	}
}
