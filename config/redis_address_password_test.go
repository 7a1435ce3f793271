package config_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// A Redis address is host:port. One written as a URL with credentials
// (redis://user:secret@host:6379, as managed Redis providers hand it out)
// is refused without its password, which sluice check would print and
// sluice serve log on a refused reload (README: "never a password"): it
// is masked as "xxxxx", as an upstream's URL is, the query (which may hold
// one: ?password=…) is left out, and the error says where the user and the
// password go.
func TestARedisAddressWithAPasswordIsRefusedWithoutIt(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	const instead = ": write the host and port alone, the user in username and the password in a file named by password_file"
	for _, c := range []struct{ address, want string }{
		{"redis://sluice:hunter2secret@r.example:6379",
			`v.yaml:6:17: store.redis.addresses[0]: "redis://sluice:xxxxx@r.example:6379" is not a host:port address (e.g. redis.internal:6379)` + instead},
		{"rediss://:hunter2secret@r.example:6380/0",
			`v.yaml:6:17: store.redis.addresses[0]: "rediss://:xxxxx@r.example:6380/0" is not a host:port address (e.g. redis.internal:6379)` + instead},
		// A password url.Parse does not read (a "/" in it), or no scheme:
		// all after the user name up to the last "@" is masked.
		{"redis://sluice:hunter2/secret@r.example:6379",
			`v.yaml:6:17: store.redis.addresses[0]: "redis://sluice:xxxxx@r.example:6379" is not a host:port address (e.g. redis.internal:6379)` + instead},
		{"sluice:hunter2secret@r.example:6379",
			`v.yaml:6:17: store.redis.addresses[0]: "sluice:xxxxx@r.example:6379" is not a host:port address (e.g. redis.internal:6379)` + instead},
		// A password alone, as redis-cli reads redis://secret@host.
		{"redis://hunter2secret@r.example:6379",
			`v.yaml:6:17: store.redis.addresses[0]: "redis://xxxxx@r.example:6379" is not a host:port address (e.g. redis.internal:6379)` + instead},
		// A password in the query, as redis-py's from_url reads one: the
		// query is left out, whatever it holds.
		{"redis://r.example:6379/0?password=hunter2secret",
			`v.yaml:6:17: store.redis.addresses[0]: "redis://r.example:6379/0?…" is not a host:port address (e.g. redis.internal:6379)` +
				": write the host and port alone, each setting of the query in its field, the password in a file named by password_file"},
		{"r.example:6379?password=hunter2secret",
			`v.yaml:6:17: store.redis.addresses[0]: "r.example:6379?…" is not a host:port address (e.g. redis.internal:6379)` +
				": write the host and port alone, each setting of the query in its field, the password in a file named by password_file"},
		// A "?" in the password of the user information masked first.
		{"redis://sluice:hunter2?secret@r.example:6379",
			`v.yaml:6:17: store.redis.addresses[0]: "redis://sluice:xxxxx@r.example:6379" is not a host:port address (e.g. redis.internal:6379)` + instead},
		{"redis://r.example:6379",
			`v.yaml:6:17: store.redis.addresses[0]: "redis://r.example:6379" is not a host:port address (e.g. redis.internal:6379): write the host and port alone, without a scheme`},
	} {
		text := plans + "store:\n  type: redis\n  redis:\n    addresses: [\"" + c.address + "\"]\n"
		_, err := config.Parse("v.yaml", []byte(text))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n%v\nwant exactly:\n%s", c.address, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: the error shows the password: %v", c.address, err)
		}
	}
}
