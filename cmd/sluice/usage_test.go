package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestHelpAlignsEverySummary: sluice help lists each command with its
// summary starting in one column, the longest name's included.
func TestHelpAlignsEverySummary(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"help"}, &out, &errOut); code != 0 {
		t.Fatalf("sluice help: exit %d, %s", code, errOut.String())
	}
	_, list, _ := strings.Cut(out.String(), "commands:\n")
	column := -1
	for line := range strings.Lines(list) {
		name := strings.Fields(line)[0]
		start := strings.Index(line, name) + len(name)
		at := start + len(line[start:]) - len(strings.TrimLeft(line[start:], " "))
		if at-start < 2 {
			t.Errorf("%q: its summary is %d space(s) from its name, want at least 2", line, at-start)
		}
		if column < 0 {
			column = at
		} else if at != column {
			t.Errorf("%q: its summary starts at column %d, the first at %d", line, at, column)
		}
	}
	if column < 0 {
		t.Fatalf("sluice help listed no command:\n%s", out.String())
	}
}
