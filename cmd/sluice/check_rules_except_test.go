package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// check prints what a rule's except: leaves out after what it matches,
// before its plans.
func TestCheckPrintsARulesExcept(t *testing.T) {
	f := filepath.Join(t.TempDir(), "except.yaml")
	os.WriteFile(f, []byte(`plans:
  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}
rules:
  - name: api
    match: {paths: [/api/]}
    except:
      - {methods: [OPTIONS]}
      - {hosts: [b.example], paths: [/api/health], headers: [{name: X-Probe, value: "1"}]}
    plans: [free]
    limits: [{name: m, algorithm: fixed-window, quantity: 3, window: 1m}]
`), 0o644)
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"check", f}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	flat := regexp.MustCompile(` +`).ReplaceAllString(out.String(), " ")
	if want := "api /api/ except OPTIONS or /api/health on b.example with X-Probe=1 for free client api.m fixed-window 3"; !strings.Contains(flat, want) {
		t.Errorf("output lacks %q:\n%s", want, out.String())
	}
}
