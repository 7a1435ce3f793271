package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A -chart that cannot be written (its folder missing) fails simulate
// before it reads any traffic or simulates: the minutes a large
// simulation takes are not spent to end in an error. Here the trace is
// standard input, never closed: the error must come without it.
func TestSimulateRefusesAnUnwritableChartBeforeSimulating(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	defer r.Close()
	stdin := os.Stdin
	os.Stdin = r
	defer func() { os.Stdin = stdin }()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	go func() { <-ctx.Done(); w.Close() }() // a read still waiting ends then
	chart := filepath.Join(t.TempDir(), "no-such-folder", "out.svg")
	var out, errOut bytes.Buffer
	code := run(ctx, []string{"simulate", "-trace", "-", "-limit", "1/1s", "-chart", chart}, &out, &errOut)
	if code != 1 || !strings.Contains(errOut.String(), "-chart "+chart) || ctx.Err() != nil {
		t.Errorf("exit %d, stderr %q, the trace's reading cut by the test's timeout: %v; want 1 and an error naming -chart at once", code, errOut.String(), ctx.Err())
	}
}
