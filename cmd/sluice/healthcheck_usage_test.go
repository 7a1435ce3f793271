package main

import (
	"strings"
	"testing"
)

// A command line sluice healthcheck cannot read — a flag it does not
// have, a value its flag cannot hold — exits 2, as its other usage errors
// do and as every command's do (main.go's run): status 1 means the server
// is not ready, so a container's HEALTHCHECK with a mistyped flag must
// read as a broken command line, not as an unhealthy server.
func TestHealthcheckFlagErrorsExitTwo(t *testing.T) {
	for _, args := range [][]string{
		{"healthcheck", "-bogus"},
		{"healthcheck", "-timeout", "soon", "http://127.0.0.1:1/readyz"},
	} {
		code, _, stderr := runSluice(t, args...)
		if code != 2 {
			t.Errorf("sluice %s: exit %d, want 2 (a usage error); stderr:\n%s", strings.Join(args, " "), code, stderr)
		}
	}
	if code, _, stderr := runSluice(t, "healthcheck", "-h"); code != 0 {
		t.Errorf("sluice healthcheck -h: exit %d, want 0; stderr:\n%s", code, stderr)
	}
}
