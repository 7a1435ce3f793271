package migrate_test

import (
	"testing"

	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/migrate"
)

// `sluice import` accepts an envoyproxy/ratelimit rules file whose boolean
// is written with no value (`shadow_mode:`, `unlimited: ~`), which
// envoyproxy/ratelimit loads (yaml.v2 reads the null as false), and the
// rules files it writes, enforced or shadow, load in sluice's Envoy
// service: the import and the service agree on the file.
func TestImportOfANullBooleanLoadsInTheService(t *testing.T) {
	for name, src := range map[string]string{
		"shadow_mode": "domain: d\ndescriptors:\n  - key: k\n    shadow_mode:\n    rate_limit: {unit: minute, requests_per_unit: 1}\n",
		"unlimited":   "domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: minute, requests_per_unit: 1, unlimited: ~}\n",
	} {
		tr, err := migrate.Import("envoy", src, "config.yaml")
		if err != nil {
			t.Errorf("%s: import refused: %v", name, err)
			continue
		}
		for _, enforce := range []bool{false, true} {
			files, err := tr.Files(enforce)
			if err != nil {
				t.Errorf("%s, enforce %v: %v", name, enforce, err)
				continue
			}
			if _, err := envoy.LoadRules(migrate.EnvoyRulesFile, []byte(files[migrate.EnvoyRulesFile])); err != nil {
				t.Errorf("%s, enforce %v: the imported rules file does not load in the service: %v", name, enforce, err)
			}
		}
	}
}
