package migrate_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportTraefikRedisIdleBucketsAreReported: Traefik forgets a client's
// bucket after 1+⌊1/rate⌋ s without a request (here 61 s), in memory and in
// Redis alike (its Redis script sets EXPIRE on the bucket's key with the
// same ttl), and the client's next request finds the whole burst of 10,
// where sluice's bucket has refilled about one token. The report says so
// for both stores.
func TestImportTraefikRedisIdleBucketsAreReported(t *testing.T) {
	for name, rl := range map[string]string{
		"memory": `{average: 1, period: 1m, burst: 10}`,
		"redis":  `{average: 1, period: 1m, burst: 10, redis: {endpoints: ["redis.internal:6379"]}}`,
	} {
		t.Run(name, func(t *testing.T) {
			tr, err := migrate.Import("traefik", "http:\n  middlewares:\n    rl:\n      rateLimit: "+rl+"\n", "dynamic.yaml")
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range tr.Differences {
				if strings.HasSuffix(d.Where, "idle buckets") && !d.Same && strings.Contains(d.Text, "after 1m1s") && strings.Contains(d.Text, "whole burst of 10") {
					return
				}
			}
			t.Errorf("Traefik forgets a bucket idle for 61 s and a client's next request finds the whole burst of 10; the report does not say so: %+v", tr.Differences)
		})
	}
}
