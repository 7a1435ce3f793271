// Package docs holds the project's documentation; its tests hold
// architecture.md's table of who may import whom, and README's promise that
// the library leaves the process alone, to the code.
package docs_test

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

const module = "github.com/sluice-dev/sluice"

// TestArchitectureSaysWhatEachPackageImports reads the table "Who may
// import whom" and fails for every package of this module that a listed
// package imports (tests aside) without the table allowing it.
func TestArchitectureSaysWhatEachPackageImports(t *testing.T) {
	doc, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(doc), "## Who may import whom")
	if !ok {
		t.Fatal("architecture.md has no section \"Who may import whom\"")
	}
	code := regexp.MustCompile("`([^`]+)`")
	path := func(name string) string {
		name = strings.TrimSuffix(name, " (root)")
		if name == "sluice" {
			return module
		}
		return module + "/" + name
	}
	allowed := map[string]map[string]bool{}
	var above []string
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 5 || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") || strings.TrimSpace(cells[1]) == "package" {
			if len(allowed) > 0 && !strings.HasPrefix(line, "|") {
				break // the table's end
			}
			continue
		}
		may := map[string]bool{}
		if strings.Contains(cells[3], "everything above") {
			for _, p := range above {
				may[p] = true
			}
		}
		for _, m := range code.FindAllStringSubmatch(cells[3], -1) {
			may[path(m[1])] = true
		}
		for _, m := range code.FindAllStringSubmatch(cells[1], -1) {
			allowed[path(m[1])] = may
			above = append(above, path(m[1]))
		}
	}
	if len(allowed) < 10 {
		t.Fatalf("read %d packages from the table", len(allowed))
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		may, listed := allowed[f[0]]
		if !listed {
			continue
		}
		for _, imp := range f[1:] {
			if (imp == module || strings.HasPrefix(imp, module+"/")) && !may[imp] {
				t.Errorf("%s imports %s, which architecture.md does not let it import", strings.TrimPrefix(f[0], module+"/"), strings.TrimPrefix(imp, module+"/"))
			}
		}
	}
}
