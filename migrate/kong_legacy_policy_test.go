package migrate_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportKongFormat11PluginWithoutPolicyIsReportedAsCluster: Kong
// before 3.0 (decK _format_version "1.1") counted a rate-limiting plugin
// without a policy (rate-limiting-advanced: strategy) as policy cluster on
// a node with a database, one count shared by the nodes, and as local only
// in DB-less or hybrid mode; Kong 3.0 made local the default everywhere.
// The report says so for a file of Kong before 3.0, where it must not
// assert per-node counting alone, and keeps saying policy local for a
// Kong 3 file.
func TestImportKongFormat11PluginWithoutPolicyIsReportedAsCluster(t *testing.T) {
	file := func(version, plugin string) string {
		return `_format_version: "` + version + `"
services:
- name: web
  url: http://web.internal
  routes: [{name: web, paths: [/]}]
  plugins:
  - ` + plugin + "\n"
	}
	for _, c := range []struct {
		name, version, plugin, field string
		legacy                       bool
	}{
		{"rate-limiting of Kong 2.x", "1.1", `{name: rate-limiting, config: {minute: 3, limit_by: ip}}`, "policy", true},
		{"rate-limiting-advanced of Kong 2.x", "1.1", `{name: rate-limiting-advanced, config: {limit: [3], window_size: [60], identifier: ip}}`, "strategy", true},
		{"rate-limiting of Kong 3", "3.0", `{name: rate-limiting, config: {minute: 3, limit_by: ip}}`, "policy", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr, err := migrate.Import("kong", file(c.version, c.plugin), "kong.yaml")
			if err != nil {
				t.Fatal(err)
			}
			var cluster, local *migrate.Difference
			for i, d := range tr.Differences {
				switch {
				case d.Where == c.field+" (unset, Kong before 3.0)":
					cluster = &tr.Differences[i]
				case d.Where == "policy local":
					local = &tr.Differences[i]
				}
			}
			if !c.legacy {
				if cluster != nil || local == nil {
					t.Errorf("a Kong 3 file without policy: want the policy local difference alone, got %+v and %+v", cluster, local)
				}
				return
			}
			if local != nil {
				t.Errorf("a Kong 2.x file without %s: the report asserts per-node counting: %s", c.field, local.Text)
			}
			if cluster == nil || cluster.Same || !strings.Contains(cluster.Text, c.field+" cluster on a node with a database") || !strings.Contains(cluster.Text, "store.type: redis") {
				t.Errorf("a Kong 2.x file without %s: want a difference saying Kong then counted with %s cluster on a node with a database and what to set; got %+v", c.field, c.field, cluster)
			}
		})
	}
}
