package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/migrate"
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
	for _, args := range [][]string{{"import", "-from", "iis", src}, {"import", "-from", "haproxy", src}, {"import", "-from", "kong", src}, {"import", "-from", "nginx", src, src}} {
		if code, _, _ := runSluice(t, args...); code == 0 {
			t.Errorf("%q: exit 0", args)
		}
	}
}

// TestImportGuessesTheFormat: without -from, the format is read off the
// file and said; a file with no sign of one, or of two, is refused, asking
// for -from.
func TestImportGuessesTheFormat(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(text), 0o644)
		return p
	}
	hap := write("haproxy.cfg", "frontend fe\n    stick-table type ip size 1k store http_req_rate(10s)\n    http-request track-sc0 src\n    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 5 }\n")
	code, _, errOut := runSluice(t, "import", "-dir", filepath.Join(dir, "out"), hap)
	if code != 0 || !strings.Contains(errOut, "reading "+hap+" as haproxy") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	cfg, err := config.Load(filepath.Join(dir, "out", "sluice.yaml"))
	if err != nil || len(cfg.Rules) != 1 || cfg.Rules[0].Limits[0].Quantity() != 5 {
		t.Errorf("%v, rules %v", err, cfg.Rules)
	}
	for text, want := range map[string]string{
		"server { listen 80; }\n":                              "say which with -from",
		"limit_req_zone x zone=a:1m rate=1r/s;\nfrontend fe\n": "it could be nginx, haproxy",
	} {
		if code, _, errOut := runSluice(t, "import", write("x.conf", text)); code == 0 || !strings.Contains(errOut, want) {
			t.Errorf("%q: exit %d, %s", text, code, errOut)
		}
	}
}

// Every format the help lists is one -from takes (ingress-nginx was
// listed and refused).
func TestImportTakesEveryListedFormat(t *testing.T) {
	_, _, help := runSluice(t, "import", "-h")
	if !strings.Contains(help, "formats") || !strings.Contains(help, "examples:") {
		t.Fatalf("import -h:\n%s", help)
	}
	listed := help[strings.Index(help, "formats"):strings.Index(help, "examples:")]
	for _, format := range migrate.Formats() {
		if !strings.Contains(listed, "\n  "+format+" ") {
			t.Errorf("the help does not list %s", format)
		}
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "ingress.yaml")
	os.WriteFile(src, []byte(`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: api
  annotations: {nginx.ingress.kubernetes.io/limit-rps: "5"}
spec:
  rules: [{host: api.example.com}]
`), 0o644)
	if code, _, errOut := runSluice(t, "import", "-from", "ingress-nginx", "-dir", filepath.Join(dir, "out"), src); code != 0 {
		t.Fatalf("-from ingress-nginx: exit %d: %s", code, errOut)
	}
	if _, err := config.Load(filepath.Join(dir, "out", "sluice.yaml")); err != nil {
		t.Error(err)
	}
}

// A translation whose configuration does not load — here nginx Plus's
// auth_jwt_key_file names a key file this machine does not have, which
// identity.jwt's jwks_file reads at load — is an error, never a file: -dir
// keeps what it held before (a sluice.yaml of an earlier import), and one
// that did not exist is not left behind.
func TestImportThatDoesNotLoadLeavesTheDirectoryAsItWas(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "nginx.conf")
	os.WriteFile(src, []byte(`http {
    limit_req_zone $jwt_claim_sub zone=peruser:10m rate=10r/s;
    server {
        auth_jwt "api";
        auth_jwt_key_file `+filepath.Join(dir, "missing.jwk")+`;
        location /api/ { limit_req zone=peruser burst=20 nodelay; }
    }
}
`), 0o644)
	out := filepath.Join(dir, "migration")
	os.Mkdir(out, 0o755)
	before := "# an earlier import\n"
	os.WriteFile(filepath.Join(out, "sluice.yaml"), []byte(before), 0o644)
	code, _, errOut := runSluice(t, "import", "-from", "nginx", "-dir", out, src)
	if code != 1 || !strings.Contains(errOut, "does not load") || strings.Contains(errOut, "wrote") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	entries, _ := os.ReadDir(out)
	if b, _ := os.ReadFile(filepath.Join(out, "sluice.yaml")); len(entries) != 1 || string(b) != before {
		t.Errorf("-dir holds %v; sluice.yaml %q, want %q as before", entries, b, before)
	}
	fresh := filepath.Join(dir, "fresh")
	if code, _, _ := runSluice(t, "import", "-from", "nginx", "-dir", fresh, src); code != 1 {
		t.Fatalf("exit %d", code)
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("-dir %s was made and left: %v", fresh, err)
	}
}

// import's command line errors exit 2, as every command's do; a file it
// cannot read or translate exits 1.
func TestImportUsageErrorsExit2AndFailures1(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "nginx.conf")
	os.WriteFile(src, []byte("server { listen 80; }\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"import"}, 2},
		{[]string{"import", src, src}, 2},
		{[]string{"import", "-no-such-flag", src}, 2},
		{[]string{"import", src, "-enforce=maybe"}, 2},
		{[]string{"import", "-from", "iis", src}, 2},
		{[]string{"import", filepath.Join(dir, "missing.conf")}, 1},
		{[]string{"import", src}, 1}, // no sign of a format
		{[]string{"import", "-from", "haproxy", "-dir", filepath.Join(dir, "out"), src}, 1},
	} {
		if code, _, errOut := runSluice(t, tc.args...); code != tc.want || !strings.Contains("\n"+errOut, "\nsluice import: ") {
			t.Errorf("%q: exit %d, want %d; stderr:\n%s", tc.args, code, tc.want, errOut)
		}
	}
}

// A file of the operator's own where import writes (its default -dir is
// the working directory, often the one that holds the served sluice.yaml)
// is not replaced: import fails naming it, -dir and -force, and leaves it
// as it was; -force replaces it. An earlier import's files are replaced
// (TestImportWritesAShadowConfigAndAReport imports twice).
func TestImportKeepsAConfigurationItDidNotWrite(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "nginx.conf")
	os.WriteFile(src, []byte("limit_req_zone $binary_remote_addr zone=one:10m rate=10r/s;\nserver { limit_req zone=one burst=5 nodelay; }\n"), 0o644)
	mine := filepath.Join(dir, "sluice.yaml")
	os.WriteFile(mine, []byte("# the one in production\n"), 0o644)
	code, _, errOut := runSluice(t, "import", "-from", "nginx", "-dir", dir, src)
	if b, _ := os.ReadFile(mine); string(b) != "# the one in production\n" {
		t.Errorf("import replaced a sluice.yaml it did not write (exit %d)", code)
	}
	if code != 1 || !strings.Contains(errOut, mine) || !strings.Contains(errOut, "-dir") || !strings.Contains(errOut, "-force") {
		t.Errorf("exit %d, want 1 and an error naming %s, -dir and -force; stderr:\n%s", code, mine, errOut)
	}
	if code, _, errOut := runSluice(t, "import", "-from", "nginx", "-dir", dir, "-force", src); code != 0 {
		t.Fatalf("-force: exit %d: %s", code, errOut)
	}
	if cfg, err := config.Load(mine); err != nil || cfg.Policy.Plan("imported") == nil {
		t.Errorf("-force did not write the imported configuration (%v)", err)
	}
}

// A FILE larger than any configuration of limits (a log, a dump, a device
// such as /dev/zero given by mistake) is refused after reading its first
// maxImportBytes, saying so, not read whole into memory.
func TestImportRefusesAFileTooLargeToBeAConfiguration(t *testing.T) {
	big := filepath.Join(t.TempDir(), "access.log")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(64 << 20); err != nil { // sparse: 64 MiB of zeros
		t.Fatal(err)
	}
	f.Close()
	code, _, errOut := runSluice(t, "import", "-from", "nginx", "-dir", t.TempDir(), big)
	if code != 1 || !strings.Contains(errOut, "more than 16 MiB") {
		t.Errorf("exit %d, want 1 and an error saying the file is too large; stderr:\n%s", code, errOut)
	}
}
