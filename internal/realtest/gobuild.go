package realtest

import (
	"os"
	"os/exec"
)

// GoBuild returns the command `go build -trimpath args...` with
// CGO_ENABLED=0 in its environment: the flags `make image` builds sluice's
// static binary with. Every test that builds a program of this module
// builds it so, and scripts/test builds cmd/sluice so before the tests
// start, so that those builds share one compile of each package (another
// CGO_ENABLED or -trimpath compiles them all again).
func GoBuild(args ...string) *exec.Cmd {
	cmd := exec.Command("go", append([]string{"build", "-trimpath"}, args...)...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	return cmd
}
