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

// check prints each alternative of a rule whose match is a list, joined
// by "or", the rule's plans once after them.
func TestCheckPrintsARulesAlternatives(t *testing.T) {
	f := filepath.Join(t.TempDir(), "any.yaml")
	os.WriteFile(f, []byte(`plans:
  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}
rules:
  - name: api
    match:
      - {hosts: [a.example], paths: [/orders]}
      - {methods: [POST], hosts: [b.example], paths: [/billing]}
    plans: [free]
    limits: [{name: m, algorithm: fixed-window, quantity: 3, window: 1m}]
`), 0o644)
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"check", f}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	flat := regexp.MustCompile(` +`).ReplaceAllString(out.String(), " ")
	if want := "api /orders on a.example or POST /billing on b.example for free client api.m fixed-window 3"; !strings.Contains(flat, want) {
		t.Errorf("output lacks %q:\n%s", want, out.String())
	}
}
