package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckPrintsPlansOfAValidFile(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"check", "../../examples/sluice.yaml"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{"free (default)", "per-day", "fixed-window", "sliding-window-log", "shadow", "is valid: 4 plans",
		"public    127.0.0.1:8080", "admin     127.0.0.1:9090", "(any loopback peer)  address  read,check,override_plan,admin"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestCheckNamesFileLineAndField(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("plans:\n  free:\n    limits:\n      - {name: x, algorithm: gcra, quantity: 10, window: 1 fortnight}\n"), 0o644)
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"check", bad}, &out, &errOut); code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	want := bad + `:4:58: plans.free.limits[0].window: "1 fortnight" is not a duration`
	if !strings.Contains(errOut.String(), want) {
		t.Errorf("stderr:\n%s\nwant it to contain:\n%s", errOut.String(), want)
	}
	if strings.Count(errOut.String(), "\n") != 2 {
		t.Errorf("want exactly the one problem and the verdict:\n%s", errOut.String())
	}
}
