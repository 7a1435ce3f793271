package server

import (
	"runtime/debug"
	"testing"
)

// The version is sluice's: the program's when sluice is the program, with
// the commit; the dependency's when a program embeds it.
func TestBuildVersion(t *testing.T) {
	for _, c := range []struct {
		name              string
		info              debug.BuildInfo
		version, revision string
	}{
		{"sluice, tagged", debug.BuildInfo{Main: debug.Module{Path: sluiceModule, Version: "v1.4.0"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "false"}}}, "v1.4.0", "abc123"},
		{"sluice from a checkout with changes", debug.BuildInfo{Main: debug.Module{Path: sluiceModule},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}}}, "(devel)", "abc123+modified"},
		{"embedded", debug.BuildInfo{Main: debug.Module{Path: "example.com/api", Version: "v2.0.0"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "fff"}},
			Deps:     []*debug.Module{{Path: "golang.org/x/net", Version: "v0.1.0"}, {Path: sluiceModule, Version: "v1.3.2"}}}, "v1.3.2", ""},
		{"embedded, replaced by a local copy", debug.BuildInfo{Main: debug.Module{Path: "example.com/api"},
			Deps: []*debug.Module{{Path: sluiceModule}}}, "(devel)", ""},
	} {
		if v, r := buildVersion(&c.info); v != c.version || r != c.revision {
			t.Errorf("%s: %q %q, want %q %q", c.name, v, r, c.version, c.revision)
		}
	}
}
