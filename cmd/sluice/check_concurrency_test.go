package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sluice check lists the concurrency limits and says that forward-auth
// and the decision API, which never see a request end, hold each slot
// until its lease ends: a limit of 1 at once with a 5-minute lease admits
// one request per 5 minutes there.
func TestCheckSaysWhereSlotsAreGivenBack(t *testing.T) {
	file := filepath.Join(t.TempDir(), "sluice.yaml")
	cfg := "plans:\n  free: {limits: [{name: in-flight, algorithm: concurrency, quantity: 1, window: 5m}, " +
		"{name: per-minute, algorithm: gcra, quantity: 60, window: 1m}]}\n"
	if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"check", file}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{"  in-flight (plan free): 1 at once, a slot never given back freed after 5m\n",
		"forward-auth and the decision API never see the end, and hold each slot they admit until its lease ends"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "per-minute (plan free)") {
		t.Errorf("a gcra limit listed among the concurrency limits:\n%s", out.String())
	}
}
