package docs_test

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/scanner"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// frameworks is the module, a directory of this repository, that has the
// routers the docs show (chi, gin, echo) among its requirements; sluice's
// own module has none of them.
const frameworks = "examples/frameworks"

// snippetImports is the package each name a Go snippet may use stands for:
// its import path and the module it is compiled in ("" for this one). A
// fragment imports every package whose name it uses as `name.`.
var snippetImports = map[string]struct{ path, module string }{
	"sluice":    {module, ""},
	"client":    {module + "/client", ""},
	"config":    {module + "/config", ""},
	"degrade":   {module + "/degrade", ""},
	"envoy":     {module + "/envoy", ""},
	"failover":  {module + "/failover", ""},
	"grpclimit": {module + "/grpclimit", ""},
	"httplimit": {module + "/httplimit", ""},
	"jwt":       {module + "/jwt", ""},
	"memory":    {module + "/memory", ""},
	"overlimit": {module + "/overlimit", ""},
	"redis":     {module + "/redis", ""},
	"sim":       {module + "/sim", ""},

	"bytes":    {"bytes", ""},
	"context":  {"context", ""},
	"errors":   {"errors", ""},
	"fmt":      {"fmt", ""},
	"http":     {"net/http", ""},
	"httptest": {"net/http/httptest", ""},
	"io":       {"io", ""},
	"json":     {"encoding/json", ""},
	"log":      {"log", ""},
	"net":      {"net", ""},
	"os":       {"os", ""},
	"sha256":   {"crypto/sha256", ""},
	"slog":     {"log/slog", ""},
	"strings":  {"strings", ""},
	"sync":     {"sync", ""},
	"time":     {"time", ""},

	"grpc": {"google.golang.org/grpc", ""},

	"chi":  {"github.com/go-chi/chi/v5", frameworks},
	"echo": {"github.com/labstack/echo/v4", frameworks},
	"gin":  {"github.com/gin-gonic/gin", frameworks},
}

// A snippet is a ```go block of a page, with the markers that precede it:
// HTML comments, invisible on GitHub, each on its own line right above the
// fence:
//
//	<!-- go: DECLARATIONS -->          declarations the block uses but does not
//	                                   make (var limiter *sluice.Limiter; …),
//	                                   compiled at file level before it
//	<!-- go: not compiled: REASON -->  the block is not compiled, for REASON
type snippet struct {
	page     string // the page's path from the repository's root
	line     int    // the fence's line, 1-based
	code     string // the block's text, the fence's indentation removed
	preamble string // the declarations of a `go:` marker, "" for none
	preLine  int    // the line of the preamble's marker
	skip     string // why the block is not compiled, "" when it is
}

func (s snippet) where() string { return s.page + ":" + strconv.Itoa(s.line) }

// goSnippets returns the ```go blocks of a Markdown page, and an error for
// each marker it cannot read: a `go:` comment with no ```go block right
// below it, or a `not compiled` one without a reason.
func goSnippets(page, text string) (snippets []snippet, problems []string) {
	lines := strings.Split(text, "\n")
	marker := func(line string) (string, bool) {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "<!--") || !strings.HasSuffix(line, "-->") {
			return "", false
		}
		body := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(line, "<!--"), "-->"))
		body, ok := strings.CutPrefix(body, "go:")
		return strings.TrimSpace(body), ok
	}
	used := map[int]bool{}
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimLeft(lines[i], " ")
		if !strings.HasPrefix(trimmed, "```") && !strings.HasPrefix(trimmed, "~~~") {
			continue
		}
		indent := len(lines[i]) - len(trimmed)
		fence := trimmed[:3]
		info := strings.Fields(strings.TrimLeft(trimmed, fence[:1]))
		start := i
		var body []string
		for i++; i < len(lines); i++ {
			if strings.HasPrefix(strings.TrimLeft(lines[i], " "), fence) {
				break
			}
			l := lines[i]
			for k := 0; k < indent && strings.HasPrefix(l, " "); k++ {
				l = l[1:]
			}
			body = append(body, l)
		}
		if len(info) == 0 || (info[0] != "go" && info[0] != "golang") {
			continue
		}
		s := snippet{page: page, line: start + 1, code: strings.Join(body, "\n") + "\n"}
		for j := start - 1; j >= 0; j-- {
			m, ok := marker(lines[j])
			if !ok {
				break
			}
			used[j] = true
			if reason, ok := strings.CutPrefix(m, "not compiled"); ok {
				s.skip = strings.TrimSpace(strings.TrimPrefix(reason, ":"))
				if s.skip == "" {
					problems = append(problems, fmt.Sprintf("%s:%d: a `not compiled` marker must say why", page, j+1))
					s.skip = "no reason given"
				}
				continue
			}
			s.preamble, s.preLine = m, j+1
		}
		snippets = append(snippets, s)
	}
	for j, l := range lines {
		if _, ok := marker(l); ok && !used[j] {
			problems = append(problems, fmt.Sprintf("%s:%d: a `go:` marker with no ```go block right below it", page, j+1))
		}
	}
	return snippets, problems
}

// wrapped is a snippet made a Go file, and what compiling it takes.
type wrapped struct {
	src      string
	module   string   // "" or frameworks
	imports  []string // the import paths it needs
	fragment bool     // a fragment: its unused variables and imports are no error
}

// wrap makes a snippet a Go file. A block that starts with a package
// clause is a file as it is. Any other is a fragment: it is put at file
// level if it parses there (declarations), else in the body of a
// function (statements), after its preamble, with an import of each
// package of snippetImports whose name it uses. //line directives keep
// every position the page's.
func wrap(s snippet) (wrapped, error) {
	fset := token.NewFileSet()
	if f, err := parser.ParseFile(fset, s.page, s.code, parser.ImportsOnly); err == nil && f.Name != nil {
		w := wrapped{src: fmt.Sprintf("//line %s:%d\n%s", s.page, s.line+1, s.code)}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			w.imports = append(w.imports, p)
			for _, pkg := range snippetImports {
				if pkg.path == p && pkg.module != "" {
					w.module = pkg.module
				}
			}
		}
		return w, nil
	}
	w := wrapped{fragment: true}
	seen := map[string]bool{}
	for _, name := range selectorNames(s.preamble + "\n" + s.code) {
		pkg, ok := snippetImports[name]
		if !ok || seen[pkg.path] {
			continue
		}
		seen[pkg.path] = true
		w.imports = append(w.imports, pkg.path)
		if pkg.module != "" {
			w.module = pkg.module
		}
	}
	sort.Strings(w.imports)
	var b strings.Builder
	b.WriteString("package snippet\n\nimport (\n")
	for _, p := range w.imports {
		fmt.Fprintf(&b, "\t%q\n", p)
	}
	b.WriteString(")\n\n")
	if s.preamble != "" {
		fmt.Fprintf(&b, "//line %s:%d\n%s\n\n", s.page, s.preLine, s.preamble)
	}
	directive := fmt.Sprintf("//line %s:%d\n", s.page, s.line+1)
	if _, err := parser.ParseFile(token.NewFileSet(), "", "package p\n"+s.code, parser.SkipObjectResolution); err == nil {
		b.WriteString(directive + s.code)
	} else {
		b.WriteString("func _() {\n" + directive + s.code + "}\n")
	}
	w.src = b.String()
	return w, nil
}

// selectorNames returns the identifiers a Go text uses before a '.'
// (fmt in fmt.Println), but not those after one (b in a.b.c).
func selectorNames(src string) []string {
	var s scanner.Scanner
	fset := token.NewFileSet()
	s.Init(fset.AddFile("", -1, len(src)), []byte(src), nil, 0)
	var names []string
	prev, prevLit := token.ILLEGAL, ""
	before := token.ILLEGAL
	for {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			return names
		}
		if tok == token.PERIOD && prev == token.IDENT && before != token.PERIOD {
			names = append(names, prevLit)
		}
		before, prev, prevLit = prev, tok, lit
	}
}

// exported caches, per module directory, the export data files that
// exportData found, so that a later call that needs no other package runs
// no `go list`.
var exported = struct {
	sync.Mutex
	files map[string]map[string]string
}{files: map[string]map[string]string{}}

// exportData returns the export data file of every package the given ones
// import, directly or not, compiled by one `go list -export` in the module
// at dir (none when an earlier call found them all).
func exportData(dir string, paths []string) (map[string]string, error) {
	exported.Lock()
	defer exported.Unlock()
	files := exported.files[dir]
	if files == nil {
		files = map[string]string{}
		exported.files[dir] = files
	}
	var missing []string
	for _, p := range paths {
		if _, ok := files[p]; !ok {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return files, nil
	}
	cmd := exec.Command("go", append([]string{"list", "-race", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}"}, missing...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -export in %s: %v\n%s", dir, err, stderr.String())
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if path, file, ok := strings.Cut(line, "\t"); ok && file != "" {
			files[path] = file
		}
	}
	return files, nil
}

// compileSnippets type-checks every snippet not marked `not compiled`
// against the packages of the repository at root as they are, with one
// `go list` for each module they need, and returns one message for each
// that does not compile: the block's page and line, then the compiler's
// errors at the page's lines. A fragment's unused variables and imports
// are no error (its reader goes on with them).
func compileSnippets(root string, snippets []snippet) []string {
	var failures []string
	type job struct {
		s snippet
		w wrapped
	}
	byModule := map[string][]job{}
	for _, s := range snippets {
		if s.skip != "" {
			continue
		}
		w, err := wrap(s)
		if err != nil {
			failures = append(failures, fmt.Sprintf("%s: %v", s.where(), err))
			continue
		}
		byModule[w.module] = append(byModule[w.module], job{s, w})
	}
	modules := make([]string, 0, len(byModule))
	for m := range byModule {
		modules = append(modules, m)
	}
	sort.Strings(modules)
	for _, m := range modules {
		jobs := byModule[m]
		need := map[string]bool{}
		for _, j := range jobs {
			for _, p := range j.w.imports {
				need[p] = true
			}
		}
		paths := make([]string, 0, len(need))
		for p := range need {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		files := map[string]string{}
		if len(paths) > 0 {
			var err error
			if files, err = exportData(filepath.Join(root, m), paths); err != nil {
				failures = append(failures, fmt.Sprintf("the blocks of module %q: %v", m, err))
				continue
			}
		}
		fset := token.NewFileSet()
		imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
			file, ok := files[path]
			if !ok {
				return nil, fmt.Errorf("no export data for %s", path)
			}
			return os.Open(file)
		})
		for _, j := range jobs {
			var errs []string
			f, err := parser.ParseFile(fset, "snippet.go", j.w.src, parser.SkipObjectResolution)
			if err != nil {
				if list, ok := err.(scanner.ErrorList); ok {
					for _, e := range list {
						errs = append(errs, e.Error())
					}
				} else {
					errs = append(errs, err.Error())
				}
			} else {
				conf := types.Config{Importer: imp, Error: func(err error) {
					msg := err.Error()
					if j.w.fragment && (strings.Contains(msg, "declared and not used") || strings.Contains(msg, "imported and not used")) {
						return
					}
					errs = append(errs, msg)
				}}
				conf.Check("snippet", fset, []*ast.File{f}, nil)
			}
			if len(errs) > 0 {
				failures = append(failures, fmt.Sprintf("%s: the ```go block does not compile:\n\t%s", j.s.where(), strings.Join(errs, "\n\t")))
			}
		}
	}
	return failures
}

// Every ```go block of README.md and docs/*.md compiles against the
// module's packages as they are: a block that starts with a package clause
// as a file, any other as a fragment (see wrap) with the declarations its
// `<!-- go: … -->` marker gives. A block that uses chi, gin or echo is
// compiled in examples/frameworks, the module that requires them. A block
// that cannot compile by design is marked `<!-- go: not compiled: why -->`,
// and the test logs it.
func TestGoSnippetsCompile(t *testing.T) {
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, "../README.md")
	var all []snippet
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.ToSlash(filepath.Clean(filepath.Join("docs", page)))
		snippets, problems := goSnippets(name, string(b))
		for _, p := range problems {
			t.Error(p)
		}
		all = append(all, snippets...)
	}
	compiled := 0
	for _, s := range all {
		if s.skip != "" {
			t.Logf("%s: not compiled: %s", s.where(), s.skip)
		} else {
			compiled++
		}
	}
	if compiled < 13 {
		t.Errorf("found %d ```go blocks to compile, want at least 13: is goSnippets still reading the docs?", compiled)
	}
	for _, f := range compileSnippets("..", all) {
		t.Error(f)
	}
}

// The test fails on a block that does not compile, at the block's line and
// the compiler's: client.md's Quick start assigned a *client.APIGate to a
// variable of type *client.LimiterGate. A guard of compileSnippets.
func TestGoSnippetsCompileFailsOnABrokenBlock(t *testing.T) {
	page := "# Client\n\n" +
		"<!-- go: var ctx context.Context -->\n" +
		"```go\n" +
		"store, err := redis.Open(ctx, redis.Options{Addrs: []string{\"redis:6379\"}, Instances: 8})\n" +
		"if err != nil {\n" +
		"\tlog.Fatal(err)\n" +
		"}\n" +
		"gate := client.NewLimiterGate(sluice.NewLimiter(store), \"partner-api\", sluice.PerSecond(100))\n" +
		"gate = client.New(\"http://sluice:9090\").Gate(client.CheckRequest{Subject: \"partner-api\"})\n" +
		"hc := &http.Client{Transport: &client.Transport{Gate: gate}}\n" +
		"```\n"
	snippets, problems := goSnippets("broken.md", page)
	if len(problems) > 0 || len(snippets) != 1 {
		t.Fatalf("goSnippets: %d blocks, problems %v; want 1 block, no problem", len(snippets), problems)
	}
	failures := compileSnippets("..", snippets)
	if len(failures) != 1 || !strings.HasPrefix(failures[0], "broken.md:4: ") ||
		!strings.Contains(failures[0], "broken.md:10:") || !strings.Contains(failures[0], "*client.APIGate") {
		t.Errorf("compileSnippets = %q, want one failure of broken.md:4 naming broken.md:10 and *client.APIGate", failures)
	}
}

// Markers are read as documented: declarations, a reason not to compile,
// and an error for one that is lost or gives no reason.
func TestGoSnippetMarkers(t *testing.T) {
	page := "<!-- go: var limiter *sluice.Limiter -->\n" +
		"```go\nlimiter.Close()\n```\n" +
		"<!-- go: not compiled: pseudo-code -->\n" +
		"```go\nfor each request { decide }\n```\n" +
		"<!-- go: var lost int -->\n\n" +
		"```go\nx := 1\n```\n" +
		"<!-- go: not compiled -->\n" +
		"```go\n?\n```\n" +
		"```sh\nnot go\n```\n"
	snippets, problems := goSnippets("p.md", page)
	if len(snippets) != 4 {
		t.Fatalf("goSnippets found %d blocks, want 4", len(snippets))
	}
	if s := snippets[0]; s.preamble != "var limiter *sluice.Limiter" || s.preLine != 1 || s.line != 2 || s.code != "limiter.Close()\n" {
		t.Errorf("block 1 = %+v", s)
	}
	if s := snippets[1]; s.skip != "pseudo-code" {
		t.Errorf("block 2: skip = %q, want pseudo-code", s.skip)
	}
	if s := snippets[2]; s.preamble != "" {
		t.Errorf("block 3: preamble %q from a marker a blank line above", s.preamble)
	}
	want := []string{
		"p.md:14: a `not compiled` marker must say why",
		"p.md:9: a `go:` marker with no ```go block right below it",
	}
	if strings.Join(problems, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems = %q, want %q", problems, want)
	}
}

// A block with a package clause is compiled as the file it is, unused
// variables included; a fragment of declarations is compiled at file level,
// and one of statements in a function, where an unused variable is no
// error.
func TestGoSnippetsAreWrappedAsDocumented(t *testing.T) {
	page := "```go\npackage main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println() }\n```\n" +
		"```go\npackage main\n\nfunc main() { x := 1 }\n```\n" +
		"```go\nfunc Second() time.Duration { return time.Second }\n```\n" +
		"```go\nd := time.Second\n```\n" +
		"```go\nfunc f() { return 1 }\n```\n"
	snippets, problems := goSnippets("w.md", page)
	if len(snippets) != 5 || len(problems) > 0 {
		t.Fatalf("goSnippets: %d blocks, problems %v; want 5, none", len(snippets), problems)
	}
	failures := compileSnippets("..", snippets)
	if len(failures) != 2 ||
		!strings.HasPrefix(failures[0], "w.md:8: ") || !strings.Contains(failures[0], "w.md:11:") || !strings.Contains(failures[0], "declared and not used") ||
		!strings.HasPrefix(failures[1], "w.md:19: ") || !strings.Contains(failures[1], "too many return values") {
		t.Errorf("compileSnippets = %q, want the unused x of w.md:8's file (line 11) and w.md:19's return", failures)
	}
}
