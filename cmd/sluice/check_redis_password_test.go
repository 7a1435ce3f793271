package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sluice check says how sluice reaches Redis "never a password"
// (printStore), and an operator pastes its output into a ticket; sluice
// serve logs the same errors on a reload it refuses. A Redis password the
// decoder refuses is not in them: a password of "$" and letters, as a
// generator writes one, refused as an environment variable it would be
// taken for (password or sentinel_password), and an address written as a
// URL with the password in its query (redis://h:6379/?password=…, as
// redis-py's from_url reads one). The error names the field and the
// reason, not the value.
func TestCheckNeverPrintsARefusedRedisPassword(t *testing.T) {
	const secret = "Xk9_aB2vQ7"
	head := "plans:\n  free:\n    limits:\n      - {name: per-minute, quantity: 10, window: 1m, algorithm: gcra}\n" +
		"default_plan: free\nstore:\n  type: redis\n  redis:\n"
	for _, c := range []struct{ name, redis, want string }{
		{"password", "    addresses: [\"127.0.0.1:6379\"]\n    password: $" + secret + "\n", "store.redis.password: environment variables are not expanded"},
		{"sentinel_password", "    mode: sentinel\n    master_name: mymaster\n    addresses: [\"127.0.0.1:26379\"]\n    sentinel_password: $" + secret + "\n",
			"store.redis.sentinel_password: environment variables are not expanded"},
		{"address query", "    addresses: [\"redis://127.0.0.1:6379/?password=" + secret + "\"]\n",
			`store.redis.addresses[0]: "redis://127.0.0.1:6379/?…" is not a host:port address`},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "sluice.yaml")
			if err := os.WriteFile(file, []byte(head+c.redis), 0o600); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := runSluice(t, "check", file)
			if code != 1 || !strings.Contains(errOut, c.want) {
				t.Errorf("sluice check: exit %d, stderr %q; want 1 and %q", code, errOut, c.want)
			}
			if strings.Contains(out+errOut, secret) {
				t.Errorf("sluice check printed the Redis password %q:\n%s%s", secret, out, errOut)
			}
		})
	}
}
