package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sluice check accepts a caller whose token is an example token the
// repository publishes, and warns of it by name, as serve logs.
func TestCheckWarnsOfACallerHoldingAPublishedExampleToken(t *testing.T) {
	file := filepath.Join(t.TempDir(), "sluice.yaml")
	os.WriteFile(file, []byte(`
plans:
  free: {limits: [{name: per-minute, algorithm: fixed-window, quantity: 10, window: 1m}]}
admin:
  callers:
    - {name: prometheus, token_sha256: f6eb2e287519cef01c47744bf1c3c61040d45f806bc1486059c53fbc59d147f4, scopes: [read]}
    - {name: ops, token_sha256: 4c5dc9b7708905f77f5e5d16316b5dfb425e68cb326dcd55a860e90a7707031e, scopes: [admin]}
`), 0o644)
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"check", file}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	want := `WARNING: admin.callers: caller "prometheus" holds the example token "sluice_example-prometheus-token-replace-me"`
	if !strings.Contains(out.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, out.String())
	}
	if strings.Contains(out.String(), `caller "ops"`) {
		t.Errorf("caller ops, whose token is its own, was warned of:\n%s", out.String())
	}
}
