package config_test

import (
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// A variable written without braces, as shells and Compose also write one
// ($REDIS_PASSWORD), is refused at its line as one with braces is: read as
// its literal text, it would send Redis the password "$REDIS_PASSWORD".
// The error says where a value that truly is $ and a name goes (a file,
// read as it is). A dollar anywhere else is text: "pa$word", "$5", and
// "$$NAME", Compose's escape, are values as any other.
func TestAVariableWithoutBracesIsRefusedNotReadLiterally(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	const redis = "store:\n  type: redis\n  redis:\n    addresses: [\"r:6379\"]\n    password: "
	for _, c := range []struct{ yaml, want string }{
		{redis + "$REDIS_PASSWORD\n",
			`v.yaml:7:15: store.redis.password: environment variables are not expanded, ` +
				`and a whole value of $ and a name is taken for one: write the value itself, or name a file that holds a secret ` +
				`(password_file, secret_file), whose text is read as it is, a leading $ too`},
		{redis + "\"$_pw1\"\n",
			`v.yaml:7:15: store.redis.password: environment variables are not expanded, ` +
				`and a whole value of $ and a name is taken for one: write the value itself, or name a file that holds a secret ` +
				`(password_file, secret_file), whose text is read as it is, a leading $ too`},
	} {
		_, err := config.Parse("v.yaml", []byte(plans+c.yaml))
		if err == nil || err.Error() != c.want {
			t.Errorf("%q:\n%v\nwant exactly:\n%s", c.yaml, err, c.want)
		}
	}
	for _, pw := range []string{"pa$word", "$5", "$$REDIS_PASSWORD", "$", "$1abc", "$REDIS_PASSWORD!"} {
		c, err := config.Parse("v.yaml", []byte(plans+redis+"'"+pw+"'\n"))
		if err != nil || c.Store.Redis.Password != pw {
			t.Errorf("the password %q: %v", pw, err)
		}
	}
}
