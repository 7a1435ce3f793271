package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// import decides for each file in -dir whether an earlier import wrote it
// (import -h, -force; docs/migration.md): sluice.yaml when it begins with
// the import's mark, envoy-rules.yaml when it begins with the import's
// shadow-mode mark or when that earlier sluice.yaml's envoy.rules loads
// it. An envoy-rules.yaml the operator put beside an earlier nginx
// import's sluice.yaml (which loads no Envoy rules) is his: an Envoy
// import without -force fails naming it and leaves it as it was, -force
// replaces it. An earlier Envoy import's rules are replaced without
// -force, enforcing (no mark, loaded by the configuration) or not.
func TestImportKeepsAnEnvoyRulesFileNoImportWrote(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "migration")
	nginx := filepath.Join(t.TempDir(), "nginx.conf")
	if err := os.WriteFile(nginx, []byte("http {\n  limit_req_zone $binary_remote_addr zone=one:10m rate=10r/s;\n  server { location /api/ { limit_req zone=one burst=20 nodelay; } }\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	envoyRules := filepath.Join("..", "..", "examples", "envoy", "ratelimit-config.yaml")
	if code, _, stderr := runSluice(t, "import", "-from", "nginx", "-dir", dir, nginx); code != 0 {
		t.Fatalf("import -from nginx: exit %d: %s", code, stderr)
	}
	rules := filepath.Join(dir, "envoy-rules.yaml")
	if _, err := os.Stat(rules); err == nil {
		t.Fatal("the nginx import wrote envoy-rules.yaml: the premise of this test does not hold")
	}
	mine := "# the operator's own rules, which no sluice import wrote\ndomain: mine\n"
	if err := os.WriteFile(rules, []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runSluice(t, "import", "-from", "envoy", "-dir", dir, envoyRules)
	got, _ := os.ReadFile(rules)
	if code != 1 || !strings.Contains(stderr, rules) || !strings.Contains(stderr, "-force") || string(got) != mine {
		t.Errorf("import -from envoy without -force: exit %d (%s), %s now begins %q; want exit 1 naming it and the file kept",
			code, stderr, rules, string(got[:min(len(got), 80)]))
	}
	if code, _, stderr := runSluice(t, "import", "-from", "envoy", "-dir", dir, "-force", envoyRules); code != 0 {
		t.Fatalf("import -from envoy -force: exit %d: %s", code, stderr)
	}
	got, _ = os.ReadFile(rules)
	if !strings.HasPrefix(string(got), importedRulesMark) {
		t.Fatalf("the shadow Envoy rules an import writes begin %q, not importedRulesMark %q", string(got[:min(len(got), 100)]), importedRulesMark)
	}
	// An earlier import's rules: shadow (marked), then enforcing (the
	// source as it is, found through envoy.rules), then shadow again.
	for _, enforce := range []bool{true, false} {
		args := []string{"import", "-from", "envoy", "-dir", dir}
		if enforce {
			args = append(args, "-enforce")
		}
		if code, _, stderr := runSluice(t, append(args, envoyRules)...); code != 0 {
			t.Fatalf("import %q over an earlier import's files: exit %d: %s", args, code, stderr)
		}
		got, _ = os.ReadFile(rules)
		if strings.HasPrefix(string(got), importedRulesMark) == enforce {
			t.Errorf("import %q: envoy-rules.yaml begins %q", args, string(got[:min(len(got), 100)]))
		}
	}
}
