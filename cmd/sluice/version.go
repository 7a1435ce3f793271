package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime/debug"

	"github.com/sluice-dev/sluice/internal/buildinfo"
)

// runVersion prints what this binary was built from: the module version
// (a release tag, a pseudo-version, or "(devel)"), the commit and whether
// the work tree had uncommitted changes (when the build recorded them: a
// build in a git checkout does, `go install module@version` does not), and
// the Go toolchain.
func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		fmt.Fprintln(stderr, "usage: sluice version\n\nPrints the module version, the commit and the Go version this binary was built from.")
		return flag.ErrHelp
	}
	if len(args) > 0 {
		return usageErrorf("unexpected argument %q", args[0])
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return fmt.Errorf("this binary carries no build information")
	}
	fmt.Fprint(stdout, versionText(info))
	return nil
}

// versionText is version's output for info: "sluice VERSION", then
// "commit REV" with " (modified)" when the tree had uncommitted changes, if
// the build recorded a commit, then the Go version.
func versionText(info *debug.BuildInfo) string {
	version, rev, modified := buildinfo.Sluice(info)
	text := "sluice " + version + "\n"
	if rev != "" {
		text += "commit " + rev
		if modified {
			text += " (modified)"
		}
		text += "\n"
	}
	return text + info.GoVersion + "\n"
}
