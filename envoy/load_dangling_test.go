package envoy_test

import (
	"bytes"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/memory"
)

// A link to nothing in a rules folder (a file removed from under its
// link, a ConfigMap key pointing into a folder not yet there) is skipped,
// as envoyproxy/ratelimit's loader (goruntime) skips it with a warning:
// the rest of the tree loads, the walk goes on past it, and the service
// given the rules logs the link's path.
func TestADanglingLinkInARulesFolderIsSkippedWithAWarning(t *testing.T) {
	dir := writeTree(t, t.TempDir(), map[string]string{
		"a.yaml":   "domain: a\n",
		"z/b.yaml": "domain: b\n",
	})
	link := filepath.Join(dir, "old.yaml")
	symlink(t, filepath.Join(dir, "removed.yaml"), link)

	files, folders, err := envoy.RuleFiles(dir)
	if err != nil {
		t.Fatalf("RuleFiles: %v", err)
	}
	if want := []string{filepath.Join(dir, "a.yaml"), filepath.Join(dir, "z", "b.yaml")}; !slices.Equal(files, want) {
		t.Errorf("files %v, want %v", files, want)
	}
	if want := []string{dir, filepath.Join(dir, "z")}; !slices.Equal(folders, want) {
		t.Errorf("folders %v, want %v", folders, want)
	}
	rules, err := envoy.LoadRuleFiles(dir)
	if err != nil {
		t.Fatalf("LoadRuleFiles: %v", err)
	}
	if got, want := rules.Domains(), []string{"a", "b"}; !slices.Equal(got, want) {
		t.Errorf("domains %v, want %v", got, want)
	}
	if got := rules.Skipped(); !slices.Equal(got, []string{link}) {
		t.Errorf("Skipped() = %v, want [%s]", got, link)
	}
	if got, err := envoy.SkippedLinks(dir); err != nil || !slices.Equal(got, []string{link}) {
		t.Errorf("SkippedLinks = %v, %v, want [%s]", got, err, link)
	}

	var logs bytes.Buffer
	mem := memory.New(memory.WithSweepInterval(0))
	t.Cleanup(func() { mem.Close() })
	svc, err := envoy.NewService(sluice.NewLimiter(mem), rules, envoy.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if got := logs.String(); !strings.Contains(got, "level=WARN") || !strings.Contains(got, link) {
		t.Errorf("NewService logged %q, want a warning naming %s", got, link)
	}
	logs.Reset()
	svc.SetRules(rules)
	if got := logs.String(); !strings.Contains(got, link) {
		t.Errorf("SetRules logged %q, want a warning naming %s", got, link)
	}
}

// A path named in envoy.rules that leads nowhere is still an error: it
// was named to be read.
func TestANamedDanglingLinkIsAnError(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "rules.yaml")
	symlink(t, filepath.Join(dir, "removed.yaml"), link)
	if _, err := envoy.LoadRuleFiles(link); err == nil {
		t.Error("a named link to nothing loaded")
	}
}
