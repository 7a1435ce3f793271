package docs_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// processCalls are the calls that change what a whole process does: its
// signals, its runtime's settings, its default logger, its exit. Only the
// binary makes them; the argument that merely reads a setting is allowed.
var processCalls = map[string]string{
	"signal.Notify":        "",
	"signal.Ignore":        "",
	"signal.Reset":         "",
	"debug.SetGCPercent":   "",
	"debug.SetMemoryLimit": "-1", // -1 reads the limit
	"debug.SetMaxThreads":  "",
	"debug.SetMaxStack":    "",
	"runtime.GOMAXPROCS":   "0", // 0 reads it
	"slog.SetDefault":      "",
	"log.SetOutput":        "",
	"log.SetFlags":         "",
	"log.Fatal":            "",
	"log.Fatalf":           "",
	"log.Fatalln":          "",
	"os.Exit":              "",
}

// TestLibraryLeavesTheProcessAlone: no package of the library (everything
// but cmd/, the GC floor main packages call, the benchmarks, examples and
// scripts, and tests) handles a signal, changes a runtime setting or the
// default logger, or ends the process — what README promises an embedding
// program.
func TestLibraryLeavesTheProcessAlone(t *testing.T) {
	skip := []string{"cmd", "bench", "examples", "scripts", "internal/gctune", ".git"}
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("..", path)
		if d.IsDir() {
			for _, s := range skip {
				if rel == s {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pkg, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			reads, listed := processCalls[pkg.Name+"."+sel.Sel.Name]
			if !listed {
				return true
			}
			if reads != "" && len(call.Args) == 1 && argText(call.Args[0]) == reads {
				return true
			}
			t.Errorf("%s: %s.%s changes the process; only cmd/sluice may", fset.Position(call.Pos()), pkg.Name, sel.Sel.Name)
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked %d files", checked)
	}
}

// argText is a literal argument as written: "0", "-1".
func argText(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.BasicLit:
		return e.Value
	case *ast.UnaryExpr:
		if lit, ok := e.X.(*ast.BasicLit); ok && e.Op == token.SUB {
			return "-" + lit.Value
		}
	}
	return ""
}
