package migrate_test

import (
	"slices"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportTraefikRedisAddress: a rateLimit middleware's redis.endpoints
// (Traefik 3.4) name its Redis; the imported store is that Redis.
func TestImportTraefikRedisAddress(t *testing.T) {
	for name, src := range map[string]string{
		"plan": `http:
  middlewares:
    rl:
      rateLimit: {average: 10, burst: 20, redis: {endpoints: ["redis.internal:6380"], db: 3}}
`,
		"routers": `http:
  routers:
    api: {rule: "PathPrefix(` + "`/api/`" + `)", service: api, middlewares: [rl]}
  middlewares:
    rl:
      rateLimit: {average: 10, burst: 20, redis: {endpoints: ["redis.internal:6380"], db: 3}}
`,
	} {
		t.Run(name, func(t *testing.T) {
			tr, err := migrate.Import("traefik", src, "dynamic.yaml")
			if err != nil {
				t.Fatal(err)
			}
			cfg := load(t, tr, false)
			if got := cfg.Store.Redis.Addresses; !slices.Equal(got, []string{"redis.internal:6380"}) || cfg.Store.Redis.DB != 3 {
				t.Errorf("store.redis: addresses %v, db %d, want [redis.internal:6380], db 3", got, cfg.Store.Redis.DB)
			}
		})
	}
}
