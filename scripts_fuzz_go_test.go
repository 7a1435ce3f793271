package sluice

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// scripts/fuzz runs the go command of $GO, as scripts/test does (make
// GO=go1.26.1 test passes it), never another go found on PATH: to list
// the module and its packages, build each fuzz binary, find the cache.
// Here $GO is a fake that answers for one package with one fuzz target
// and builds a fake fuzz binary; a go on PATH fails and says so.
func TestScriptsFuzzRunsTheGoCommandOfGO(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	tmp := t.TempDir()
	log := filepath.Join(tmp, "log")
	pkg := filepath.Join(tmp, "pkg")
	path := filepath.Join(tmp, "path")
	for _, d := range []string{pkg, path} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(pkg, "a_test.go"): "package pkg\n\nfunc FuzzA(f *testing.F) {}\n",
		filepath.Join(tmp, "fakego"): `#!/bin/bash
echo "GO $1 $2" >> "$LOG"
case "$1" in
env) echo "$FAKECACHE" ;;
list) if [ "$2" = -m ]; then echo example.com/fake; else echo "$PKGDIR example.com/fake/pkg"; fi ;;
test) while [ $# -gt 0 ]; do
        if [ "$1" = -o ]; then printf '#!/bin/bash\necho "fuzzed $*" >> "$LOG"\n' > "$2" && chmod +x "$2"; fi
        shift
      done ;;
esac
`,
		filepath.Join(path, "go"): "#!/bin/bash\necho \"plain go $*\" >> \"$LOG\"\nexit 3\n",
	}
	for name, text := range files {
		if err := os.WriteFile(name, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("./scripts/fuzz", "1s")
	cmd.Env = append(os.Environ(), "GO="+filepath.Join(tmp, "fakego"), "PATH="+path+":"+os.Getenv("PATH"),
		"LOG="+log, "PKGDIR="+pkg, "FAKECACHE="+filepath.Join(tmp, "cache"), "FUZZ_LANES=1")
	out, err := cmd.CombinedOutput()
	got, _ := os.ReadFile(log)
	if err != nil {
		t.Fatalf("scripts/fuzz: %v\n%s\ncalls:\n%s", err, out, got)
	}
	calls := string(got)
	if strings.Contains(calls, "plain go") {
		t.Errorf("scripts/fuzz ran the go on PATH, not $GO:\n%s", calls)
	}
	for _, want := range []string{"GO env GOCACHE", "GO list -m", "GO list -f", "GO test -c", "fuzzed -test.paniconexit0"} {
		if !strings.Contains(calls, want) {
			t.Errorf("scripts/fuzz: no %q among its calls:\n%s\noutput:\n%s", want, calls, out)
		}
	}
}
