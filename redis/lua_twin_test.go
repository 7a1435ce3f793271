package redis

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"regexp"
	"strings"
	"testing"
)

// Every Lua function that has a Go twin names it above its definition
// ("-- Go twin: internal/algo.Bucket"), every algorithm's decide function
// and the release of a lease among them, and every name so given is a
// function of internal/algo (or sluice.DecideBatch): a twin renamed or
// removed fails here, so the comment cannot go stale. The conformance
// suite (internal/conformance) then holds the twins to the same decisions.
func TestLuaFunctionsNameTheirGoTwins(t *testing.T) {
	algoFuncs := map[string]bool{}
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, "../internal/algo", func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok {
					name := fd.Name.Name
					if fd.Recv != nil {
						name = "(*Params)." + name
					}
					algoFuncs[name] = true
				}
			}
		}
	}
	twin := regexp.MustCompile(`^-- Go twin: (\S+)`)
	mustHave := regexp.MustCompile(`^function \w+\.(decide|release)\(`)
	files, err := fs.Glob(luaFiles, "lua/*.lua")
	if err != nil || len(files) == 0 {
		t.Fatal(files, err)
	}
	named := 0
	for _, name := range files {
		b, err := fs.ReadFile(luaFiles, name)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		for i, line := range lines {
			if m := twin.FindStringSubmatch(line); m != nil {
				named++
				switch ref := m[1]; {
				case ref == "sluice.DecideBatch":
				case strings.HasPrefix(ref, "internal/algo."):
					if !algoFuncs[strings.TrimPrefix(ref, "internal/algo.")] {
						t.Errorf("%s:%d: Go twin %s is no function of internal/algo", name, i+1, ref)
					}
				default:
					t.Errorf("%s:%d: Go twin %s is neither in internal/algo nor sluice.DecideBatch", name, i+1, ref)
				}
			}
			if mustHave.MatchString(line) && (i == 0 || !twin.MatchString(lines[i-1])) {
				t.Errorf("%s:%d: %q names no Go twin on the line above", name, i+1, line)
			}
		}
	}
	if named < 10 {
		t.Errorf("only %d Lua functions name a Go twin", named)
	}
}
