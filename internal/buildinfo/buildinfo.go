// Package buildinfo reads which sluice a binary was built from, for
// sluice version and the sluice_build_info metric.
package buildinfo

import "runtime/debug"

// Module is sluice's module path.
const Module = "github.com/sluice-dev/sluice"

// Sluice returns the version of sluice in info — the main module's when it
// is sluice (or info names none), else that of the dependency on sluice, or
// of what replaces it when the dependency is replaced — "(devel)" when there
// is none (a build that recorded no version control information, such as go
// run or -buildvcs=false; a dependency replaced by a directory);
// and, when sluice is the main module, the commit the build recorded (""
// if none) and whether its tree had uncommitted changes.
func Sluice(info *debug.BuildInfo) (version, revision string, modified bool) {
	version = "(devel)"
	if info.Main.Path != "" && info.Main.Path != Module {
		for _, d := range info.Deps {
			if d.Path != Module {
				continue
			}
			if d.Replace != nil {
				d = d.Replace
			}
			if d.Version != "" {
				return d.Version, "", false
			}
		}
		return version, "", false
	}
	if info.Main.Version != "" {
		version = info.Main.Version
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	return version, revision, modified
}
