package migrate_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportKongAdvancedSyncRateMinusOneCountsPerNode: rate-limiting-advanced
// with sync_rate -1 keeps its counters in each node's memory and never
// synchronises them with its strategy's Redis or database, so every node
// counts alone, as policy local does; the import says so, and writes no
// Redis store claiming one count shared by all nodes.
func TestImportKongAdvancedSyncRateMinusOneCountsPerNode(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
plugins:
  - name: rate-limiting-advanced
    config:
      limit: [10]
      window_size: [60]
      identifier: ip
      strategy: redis
      sync_rate: -1
      redis: {host: redis.internal, port: 6379}
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	files, err := tr.Files(true)
	if err != nil {
		t.Fatal(err)
	}
	if cfg := files[migrate.ConfigFile]; !strings.Contains(cfg, "type: memory") || strings.Contains(cfg, "redis.internal") {
		t.Errorf("the store of counters kept in each node's memory:\n%s", cfg)
	}
	if hasDifference(tr, true, "one count shared by all nodes") {
		t.Error("the report says the nodes shared one count")
	}
	if !hasDifference(tr, false, "sync_rate -1") {
		t.Errorf("no difference explains sync_rate -1: %+v", tr.Differences)
	}
}
