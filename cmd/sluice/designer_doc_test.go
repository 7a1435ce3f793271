package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// docBlock returns the lines of doc that follow the line "$ " + command
// inside its code block, up to the next command or the end of the block.
func docBlock(t *testing.T, doc, command string) string {
	t.Helper()
	_, after, ok := strings.Cut(doc, "\n$ "+command+"\n")
	if !ok {
		t.Fatalf("docs/designer.md shows no %q", command)
	}
	var out []string
	for _, line := range strings.Split(after, "\n") {
		if strings.HasPrefix(line, "```") || strings.HasPrefix(line, "$ ") {
			break
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// docs/designer.md's example runs design on its requirements file and then
// "sluice check sluice.yaml": the output it shows is what check prints.
func TestDesignerDocShowsCheckAsItPrints(t *testing.T) {
	doc, err := os.ReadFile("../../docs/designer.md")
	if err != nil {
		t.Fatal(err)
	}
	// The requirements file is the first YAML block of the design section.
	_, rest, _ := strings.Cut(string(doc), "## `sluice design`")
	_, rest, _ = strings.Cut(rest, "```yaml\n")
	needs, _, _ := strings.Cut(rest, "```")
	dir := t.TempDir() + string(filepath.Separator)
	os.WriteFile(dir+"needs.yaml", []byte(needs), 0o644)
	if code, _, errOut := runSluice(t, "design", "-requirements", dir+"needs.yaml", "-config", dir+"sluice.yaml", "-o", dir+"design.md"); code != 0 {
		t.Fatalf("design: exit %d: %s", code, errOut)
	}
	code, out, errOut := runSluice(t, "check", dir+"sluice.yaml")
	if code != 0 {
		t.Fatalf("check: exit %d: %s", code, errOut)
	}
	out = strings.ReplaceAll(out, dir, "") // as if run in dir, as the page shows it
	if want := docBlock(t, string(doc), "sluice check sluice.yaml"); strings.TrimRight(out, "\n") != strings.TrimRight(want, "\n") {
		t.Errorf("sluice check prints:\n%s\ndocs/designer.md shows:\n%s", out, want)
	}
}
