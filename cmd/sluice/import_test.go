package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

func TestImportWritesAShadowConfigAndAReport(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "nginx.conf")
	os.WriteFile(src, []byte("limit_req_zone $binary_remote_addr zone=one:10m rate=10r/s;\nserver { limit_req zone=one burst=5 nodelay; }\n"), 0o644)
	out := filepath.Join(dir, "migration")
	code, report, errOut := runSluice(t, "import", "-from", "nginx", src, "-dir", out) // flags after FILE too
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	cfg, err := config.Load(filepath.Join(out, "sluice.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if l := cfg.Policy.Plan("imported").Limits[0]; l.String() != "one: gcra 10 per 1s burst 6 (shadow)" {
		t.Errorf("imported %s", l)
	}
	for _, want := range []string{"## Context Assessment", "## Implementation Steps", "**Differs** — clock", "shadow: true"} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if code, _, _ := runSluice(t, "import", "-from", "nginx", "-dir", out, "-enforce", src); code != 0 {
		t.Fatal("-enforce failed")
	}
	if cfg, err = config.Load(filepath.Join(out, "sluice.yaml")); err != nil || cfg.Policy.Plan("imported").Limits[0].Shadow() {
		t.Errorf("-enforce wrote a shadow limit (%v)", err)
	}
	for _, args := range [][]string{{"import", src}, {"import", "-from", "haproxy", src}, {"import", "-from", "kong", src}, {"import", "-from", "nginx", src, src}} {
		if code, _, _ := runSluice(t, args...); code == 0 {
			t.Errorf("%q: exit 0", args)
		}
	}
}
