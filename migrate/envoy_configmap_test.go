package migrate_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// envoyConfigMap is envoyproxy/ratelimit's rules as Kubernetes deployments
// of it keep them: a ConfigMap mounted as the service's config directory.
const envoyConfigMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: ratelimit-config
data:
  config.yaml: |
    domain: rl
    descriptors:
      - key: PATH
        value: "/foo"
        rate_limit:
          unit: minute
          requests_per_unit: 1
`

// TestImportEnvoyRulesFromAConfigMap: the import reads the rules file a
// ConfigMap holds, as envoyproxy/ratelimit reads it once mounted, rather
// than refusing the ConfigMap for having no domain.
func TestImportEnvoyRulesFromAConfigMap(t *testing.T) {
	if got, ok := migrate.Detect(envoyConfigMap); !ok || got != "envoy" {
		t.Errorf("Detect = %q (%v), want envoy", got, ok)
	}
	tr, err := migrate.Import("envoy", envoyConfigMap, "ratelimit.yaml")
	if err != nil {
		t.Fatal(err)
	}
	load(t, tr, false)
	files, err := tr.Files(false)
	if err != nil {
		t.Fatal(err)
	}
	rules := files[migrate.EnvoyRulesFile]
	if !strings.Contains(rules, "domain: rl") || !strings.Contains(rules, "requests_per_unit: 1") || !strings.Contains(rules, "shadow_mode: true") {
		t.Errorf("the rules file is not the ConfigMap's:\n%s", rules)
	}
	if strings.Contains(rules, "ConfigMap") {
		t.Errorf("the rules file holds the ConfigMap:\n%s", rules)
	}

	two := envoyConfigMap + "  other.yaml: |\n    domain: other\n    descriptors: []\n"
	_, err = migrate.Import("envoy", two, "ratelimit.yaml")
	if err == nil || !strings.Contains(err.Error(), "config.yaml") || !strings.Contains(err.Error(), "other.yaml") {
		t.Errorf("a ConfigMap of two rules files: err = %v, want both named", err)
	}
}
