package migrate_test

import (
	"slices"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportKongRedisAddress: policy redis names Kong's Redis (redis.host
// and redis.port in Kong 3.x, redis_host and redis_port before); the
// imported store is that Redis, not a placeholder localhost, and its
// password is left to set, reported.
func TestImportKongRedisAddress(t *testing.T) {
	for name, c := range map[string]struct{ src, want string }{
		"Kong 3": {`_format_version: "3.0"
plugins:
  - name: rate-limiting
    config: {minute: 20, policy: redis, limit_by: ip, redis: {host: redis.internal, port: 6380, database: 2, password: s3cret}}
`, "redis.internal:6380"},
		"Kong 2": {`_format_version: "1.1"
plugins:
  - name: rate-limiting
    config: {minute: 20, policy: redis, limit_by: ip, redis_host: 10.0.0.7}
`, "10.0.0.7:6379"},
	} {
		t.Run(name, func(t *testing.T) {
			tr, err := migrate.Import("kong", c.src, "kong.yaml")
			if err != nil {
				t.Fatal(err)
			}
			cfg := load(t, tr, false)
			if got := cfg.Store.Redis.Addresses; !slices.Equal(got, []string{c.want}) {
				t.Errorf("store.redis.addresses = %v, want [%s]", got, c.want)
			}
			if name == "Kong 3" {
				if cfg.Store.Redis.DB != 2 {
					t.Errorf("store.redis.db = %d, want 2", cfg.Store.Redis.DB)
				}
				if !hasDifference(tr, false, "password") {
					t.Errorf("the password left to set is not reported: %+v", tr.Differences)
				}
			}
		})
	}
}
