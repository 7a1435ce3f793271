package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
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

// fullWriter is a standard output that cannot be written: a full disk, a
// closed descriptor.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// A command whose output could not be written has failed, though it did
// its work: "sluice token > token.txt" on a full disk exits non-zero and
// says why, where a status 0 would leave a script holding no token.
func TestAnOutputThatCannotBeWrittenIsAFailure(t *testing.T) {
	file := filepath.Join(t.TempDir(), "sluice.yaml")
	if err := os.WriteFile(file, []byte(opsConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"token"}, {"version"}, {"check", file}, {"help"}} {
		var errOut bytes.Buffer
		code := run(context.Background(), args, fullWriter{}, &errOut)
		if code == 0 || !strings.Contains(errOut.String(), "standard output: no space left on device") {
			t.Errorf("%q: exit %d, stderr %q; want a failure that says the output was not written", args, code, errOut.String())
		}
	}
}
