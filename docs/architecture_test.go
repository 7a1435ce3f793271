// Package docs holds the project's documentation; its tests hold it to the
// code: architecture.md's tree and table of who may import whom,
// RELIABILITY.md's list of fuzz targets, the guides' configurations, Go
// blocks and links, and README's promise that the library leaves the
// process alone.
package docs_test

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
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

// thirdParty is the name architecture.md's table gives each module outside
// this one whose packages a package of this module imports: an import
// under a path on the left is allowed only where the row's "may import"
// cell names the module as on the right, outside backquotes, as a word.
var thirdParty = []struct{ path, name string }{
	{"go.yaml.in/yaml/", "yaml"},
	{"github.com/redis/rueidis", "rueidis"},
	{"github.com/dunglas/httpsfv", "httpsfv"},
	{"github.com/go-jose/go-jose/", "go-jose"},
	{"golang.org/x/net/", "x/net"},
	{"gonum.org/v1/plot", "gonum/plot"},
	{"github.com/BurntSushi/toml", "toml"},
	{"github.com/pires/go-proxyproto", "go-proxyproto"},
	{"github.com/fsnotify/fsnotify", "fsnotify"},
	{"github.com/prometheus/client_golang/", "Prometheus client"},
	{"github.com/chromedp/", "chromedp"},
	{"google.golang.org/grpc", "grpc"},
	{"github.com/envoyproxy/go-control-plane/", "go-control-plane"},
	{"google.golang.org/protobuf/", "protobuf"},
	{"google.golang.org/genproto/", "genproto"},
	{"go.uber.org/goleak", "goleak"},
	{"pgregory.net/rapid", "rapid"},
}

// tableRow is one row of "Who may import whom": the packages it names and
// its "may import" cell.
type tableRow struct {
	packages []string
	may      string
}

// importTable reads architecture.md's table "Who may import whom".
func importTable(t *testing.T) []tableRow {
	t.Helper()
	doc, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(doc), "## Who may import whom")
	if !ok {
		t.Fatal("architecture.md has no section \"Who may import whom\"")
	}
	var rows []tableRow
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 5 || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") || strings.TrimSpace(cells[1]) == "package" {
			if len(rows) > 0 && !strings.HasPrefix(line, "|") {
				break // the table's end
			}
			continue
		}
		var r tableRow
		for _, m := range inBackquotes.FindAllStringSubmatch(cells[1], -1) {
			r.packages = append(r.packages, strings.TrimSuffix(m[1], " (root)"))
		}
		r.may = cells[3]
		rows = append(rows, r)
	}
	if len(rows) < 10 {
		t.Fatalf("read %d rows from the table", len(rows))
	}
	return rows
}

var inBackquotes = regexp.MustCompile("`([^`]+)`")

// never matches a cell's "(never …)", which names what a row may not import.
var never = regexp.MustCompile(`\(never [^)]*\)`)

// backquoted reports whether cell names the package of this module imp in
// backquotes.
func backquoted(cell, imp string) bool {
	for _, m := range inBackquotes.FindAllStringSubmatch(cell, -1) {
		if p := module + "/" + m[1]; p == imp || m[1] == "sluice" && imp == module {
			return true
		}
	}
	return false
}

// goPackage is what go list says of one package of this module.
type goPackage struct {
	ImportPath, Dir           string
	GoFiles, Imports          []string
	TestImports, XTestImports []string
}

// modulePackages lists every package of this module.
func modulePackages(t *testing.T) []goPackage {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []goPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p goPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// TestArchitectureNamesEveryPackageAndWhatItImports holds the table "Who
// may import whom" to go list, both ways: every package of the module has
// a row; every module outside this one that a package imports is named in
// its row; every package of this module that a row names is imported by
// the row's packages. A row whose cell reads "in their tests:" is of
// packages that are tests only: their tests' imports are held to it.
func TestArchitectureNamesEveryPackageAndWhatItImports(t *testing.T) {
	rows := importTable(t)
	row := map[string]tableRow{}
	for _, r := range rows {
		for _, p := range r.packages {
			row[p] = r
		}
	}
	named := func(cell, name string) bool {
		cell = inBackquotes.ReplaceAllString(cell, " ")
		return regexp.MustCompile(`(^|[^\w/-])` + regexp.QuoteMeta(name) + `($|[^\w/-])`).MatchString(cell)
	}
	imported := map[string]map[string]bool{} // by the rows' packages, tests included
	for _, p := range modulePackages(t) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		if rel == "" {
			rel = "sluice"
		}
		r, listed := row[rel]
		if !listed {
			t.Errorf("architecture.md's table has no row for %s", rel)
			continue
		}
		imports := p.Imports
		if strings.Contains(r.may, "in their tests:") {
			imports = append(append([]string{}, p.TestImports...), p.XTestImports...)
		}
		for _, imp := range imports {
			if imp == p.ImportPath {
				continue
			}
			if imp == module || strings.HasPrefix(imp, module+"/") {
				// TestArchitectureSaysWhatEachPackageImports holds the
				// other rows' packages to their cells.
				if tests := strings.Contains(r.may, "in their tests:"); tests && !backquoted(r.may, imp) {
					t.Errorf("%s's tests import %s, but its row does not name it", rel, strings.TrimPrefix(imp, module+"/"))
				}
				continue
			}
			if !strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") {
				continue // the standard library
			}
			var name string
			for _, m := range thirdParty {
				if strings.HasPrefix(imp, m.path) {
					name = m.name
					break
				}
			}
			if name == "" {
				t.Errorf("%s imports %s, of a module this test has no name for", rel, imp)
				continue
			}
			if !named(r.may, name) {
				t.Errorf("%s imports %s, but its row does not name %s", rel, imp, name)
			}
		}
		if imported[r.may] == nil {
			imported[r.may] = map[string]bool{}
		}
		for _, list := range [][]string{p.Imports, p.TestImports, p.XTestImports} {
			for _, imp := range list {
				imported[r.may][imp] = true
			}
		}
	}
	for _, r := range rows {
		for _, m := range inBackquotes.FindAllStringSubmatch(never.ReplaceAllString(r.may, ""), -1) {
			p := module + "/" + m[1]
			if m[1] == "sluice" {
				p = module
			}
			if !imported[r.may][p] {
				t.Errorf("the row of %s names %s, which none of them imports", strings.Join(r.packages, ", "), m[1])
			}
		}
	}
}

// TestArchitectureTreeNamesEveryPackage holds the tree at the top of
// architecture.md to the module's directories: every package's directory
// is a branch, or, outside internal/, its top directory is; every branch
// is a directory.
func TestArchitectureTreeNamesEveryPackage(t *testing.T) {
	doc, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	_, tree, _ := strings.Cut(string(doc), "```\n")
	tree, _, _ = strings.Cut(tree, "```")
	branch := regexp.MustCompile(`^([│ ]*)[├└]── (\S+)/`)
	dirs := map[string]bool{}
	var parent string
	for _, line := range strings.Split(tree, "\n") {
		m := branch.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if m[1] == "" {
			parent = m[2]
			dirs[m[2]] = true
		} else {
			dirs[parent+"/"+m[2]] = true
		}
	}
	for d := range dirs {
		if fi, err := os.Stat(filepath.Join("..", d)); err != nil || !fi.IsDir() {
			t.Errorf("the tree has %s/, which is not a directory", d)
		}
	}
	for _, p := range modulePackages(t) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		if rel == "" {
			continue // sluice/, the tree's root
		}
		if top := strings.SplitN(rel, "/", 2)[0]; !dirs[rel] && (top == "internal" || !dirs[top]) {
			t.Errorf("the tree has no branch for %s/", rel)
		}
	}
}
