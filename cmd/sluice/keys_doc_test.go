package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A token on the command line (sluice keys -token "$ADMIN") is in the
// process's arguments, which every user of the host reads with ps: the
// documents' examples pass it as $SLUICE_TOKEN or -token-file, and the
// flag's help says so.
func TestTheDocsPassTheAdminTokenOutsideTheArguments(t *testing.T) {
	for _, doc := range []string{"README.md", filepath.Join("docs", "operations.md")} {
		text, err := os.ReadFile(filepath.Join("..", "..", doc))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(text), "\n") {
			if _, after, ok := strings.Cut(line, "sluice keys "); ok && strings.Contains(after, "-token ") {
				t.Errorf("%s:%d: the token is an argument, which ps shows:\n%s", doc, i+1, line)
			}
		}
	}
	var errOut bytes.Buffer
	run(context.Background(), []string{"keys", "-h"}, new(bytes.Buffer), &errOut)
	if !strings.Contains(errOut.String(), "with ps") {
		t.Errorf("keys -h does not say that -token shows in ps:\n%s", errOut.String())
	}
}
