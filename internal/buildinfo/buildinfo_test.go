package buildinfo

import (
	"runtime/debug"
	"testing"
)

// The version is sluice's: the program's when sluice is the program, with
// the commit; the dependency's when a program embeds it.
func TestSluice(t *testing.T) {
	for _, c := range []struct {
		name              string
		info              debug.BuildInfo
		version, revision string
		modified          bool
	}{
		{"sluice, tagged", debug.BuildInfo{Main: debug.Module{Path: Module, Version: "v1.4.0"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "false"}}}, "v1.4.0", "abc123", false},
		{"sluice from a checkout with changes", debug.BuildInfo{Main: debug.Module{Path: Module},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}}}, "(devel)", "abc123", true},
		{"embedded", debug.BuildInfo{Main: debug.Module{Path: "example.com/api", Version: "v2.0.0"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "fff"}},
			Deps:     []*debug.Module{{Path: "golang.org/x/net", Version: "v0.1.0"}, {Path: Module, Version: "v1.3.2"}}}, "v1.3.2", "", false},
		{"embedded, replaced by a local copy", debug.BuildInfo{Main: debug.Module{Path: "example.com/api"},
			Deps: []*debug.Module{{Path: Module}}}, "(devel)", "", false},
		{"embedded, replaced by a directory (as the go command records it)", debug.BuildInfo{Main: debug.Module{Path: "example.com/api"},
			Deps: []*debug.Module{{Path: Module, Version: "v1.3.2", Replace: &debug.Module{Path: "../sluice", Version: "(devel)"}}}},
			"(devel)", "", false},
		{"embedded, replaced by another module's version", debug.BuildInfo{Main: debug.Module{Path: "example.com/api"},
			Deps: []*debug.Module{{Path: Module, Version: "v1.3.2", Replace: &debug.Module{Path: "example.com/fork/sluice", Version: "v1.3.3-fix"}}}},
			"v1.3.3-fix", "", false},
		{"no main module path (a test's)", debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "v1.2.3", "", false},
	} {
		if v, r, m := Sluice(&c.info); v != c.version || r != c.revision || m != c.modified {
			t.Errorf("%s: %q %q %v, want %q %q %v", c.name, v, r, m, c.version, c.revision, c.modified)
		}
	}
}
