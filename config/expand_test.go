package config_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// Anchors, aliases and merge keys are not expanded: each alias (of a value
// or of a key) or merge key is one error at its place, saying so, and
// nothing is reported of what it stood for.
func TestAliasesAndMergeKeysAreRefusedAtTheirPlace(t *testing.T) {
	const free = "plans:\n  free: &base\n    limits: [{name: m, algorithm: gcra, quantity: &q 10, window: 1m}]\n"
	for _, c := range []struct{ name, yaml, want string }{
		{"an alias for a plan", free + "  pro: *base\n",
			"a.yaml:4:8: plans.pro: want a mapping, got an alias (*base), which is not expanded here: write the value out"},
		{"a merge key", free + "  pro:\n    <<: *base\n",
			"a.yaml:5:5: plans.pro.<<: a merge key, which is not expanded here: write the keys out"},
		{"an alias for a number", free + "global: [{name: g, algorithm: gcra, quantity: *q, window: 1s}]\n",
			"a.yaml:4:47: global[0].quantity: want an integer, got an alias (*q), which is not expanded here: write the value out"},
		// An alias as a key was read as its anchor's name: a plan "pro"
		// here, a limit's window below.
		{"an alias for a plan's name", "plans:\n  free:\n    limits: [{name: &pro m, algorithm: gcra, quantity: 10, window: 1m}]\n" +
			"  *pro :\n    limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]\n",
			"a.yaml:4:3: plans: a key written as an alias (*pro), which is not expanded here: write the key out"},
		{"an alias for a field's name", "plans:\n  free:\n    limits: [{name: &window m, algorithm: gcra, quantity: 10, *window : 1m}]\n",
			"a.yaml:3:63: plans.free.limits[0]: a key written as an alias (*window), which is not expanded here: write the key out"},
		{"an alias for a key of the top", free + "listen: &upstream \":9000\"\n*upstream : http://api.internal\n",
			"a.yaml:5:1: a key written as an alias (*upstream), which is not expanded here: write the key out"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := config.Parse("a.yaml", []byte(c.yaml))
			if err == nil || err.Error() != c.want {
				t.Fatalf("error:\n%v\nwant exactly:\n%s", err, c.want)
			}
		})
	}
}

// sluice expands no variables: a value that asks for one (a tag such as
// !env, or ${NAME}) is refused at its place instead of being read as its
// literal text, a password of "REDIS_PASSWORD"; so is a value tagged
// !!binary, which sluice does not decode.
func TestVariablesAreNotExpandedButRefused(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	for _, c := range []struct{ yaml, want string }{
		{"store:\n  type: redis\n  redis:\n    addresses: [\"r:6379\"]\n    password: !env REDIS_PASSWORD\n",
			"v.yaml:7:15: store.redis.password: the tag !env is not read here, and no variable is expanded"},
		{"store:\n  type: redis\n  redis:\n    addresses: [\"r:6379\"]\n    password: ${REDIS_PASSWORD}\n",
			`v.yaml:7:15: store.redis.password: environment variables (${NAME}) are not expanded`},
		{"upstream: \"${UPSTREAM}\"\n", `v.yaml:3:11: upstream: environment variables (${NAME}) are not expanded`},
		{"admin:\n  callers:\n    - name: ci\n      token_sha256: ${CI_TOKEN_HASH}\n      scopes: [check]\n",
			`v.yaml:6:21: admin.callers[0].token_sha256: environment variables (${NAME}) are not expanded`},
		// A reference with a default, as Compose and shells write one, and
		// one inside a value: the host "${REDIS_HOST}" passed sluice check.
		{"store:\n  type: redis\n  redis:\n    addresses: [\"r:6379\"]\n    password: ${REDIS_PASSWORD:-changeme}\n",
			`v.yaml:7:15: store.redis.password: environment variables (${NAME}) are not expanded`},
		{"store:\n  type: redis\n  redis:\n    addresses: [\"${REDIS_HOST}:6379\"]\n",
			`v.yaml:6:17: store.redis.addresses[0]: environment variables (${NAME}) are not expanded`},
		{"upstream: \"http://${API_HOST}:8080/v1\"\n", `v.yaml:3:11: upstream: environment variables (${NAME}) are not expanded`},
		// YAML's !!binary stands for the bytes its base64 encodes (as a
		// Kubernetes Secret's data holds a password); it was read as the
		// base64 text itself, a password of "c2VjcmV0" for "secret".
		{"store:\n  type: redis\n  redis:\n    addresses: [\"r:6379\"]\n    password: !!binary c2VjcmV0\n",
			"v.yaml:7:15: store.redis.password: the tag !!binary is not decoded here: write the value itself, or name a file that holds a secret (password_file, secret_file)"},
	} {
		_, err := config.Parse("v.yaml", []byte(plans+c.yaml))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: %v, want %s", c.yaml, err, c.want)
		}
	}
	// Text that only contains a dollar is a value as any other, and so is
	// a reference escaped as Compose escapes one ($$).
	c, err := config.Parse("v.yaml", []byte(plans+"store:\n  type: redis\n  redis: {addresses: [\"r:6379\"], password: \"pa$${x}word\"}\n"+
		"response: {template: '{\"error\": \"${{detail}}\"}'}\nrules: [{name: r, match: {headers: [{name: X-A, value: \"$5 {off}\"}]}, limits: [{name: m, algorithm: gcra, quantity: 1, window: 1s}]}]\n"))
	if err != nil || c.Store.Redis.Password != "pa$${x}word" {
		t.Errorf("a password with a dollar: %v", err)
	}
}
