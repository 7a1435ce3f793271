package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// "sluice COMMAND -h" prints the command's usage and exits 0, as asked; a
// flag the command does not have prints its usage and exits non-zero.
func TestEveryCommandAnswersHelpWithUsageAndStatus0(t *testing.T) {
	for name := range commands() {
		t.Run(name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := run(context.Background(), []string{name, "-h"}, &out, &errOut); code != 0 {
				t.Errorf("-h: exit %d, want 0; stderr:\n%s", code, errOut.String())
			}
			if !strings.Contains(strings.ToLower(errOut.String()), "usage") || strings.Contains(errOut.String(), "help requested") {
				t.Errorf("-h: stderr is not the usage alone:\n%s", errOut.String())
			}
			out.Reset()
			errOut.Reset()
			if code := run(context.Background(), []string{name, "-no-such-flag"}, &out, &errOut); code == 0 {
				t.Errorf("-no-such-flag: exit 0; stderr:\n%s", errOut.String())
			}
		})
	}
}
