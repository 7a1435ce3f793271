package server_test

import (
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// Envoy rules that cannot be read are an error that names them once.
func TestEnvoyRulesThatCannotBeReadAreNamedOnce(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.yaml")
	cfg, err := config.Parse("s.yaml", []byte(testConfig+"envoy: {listen: 127.0.0.1:0, rules: ["+missing+"]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	st := memory.New()
	defer st.Close()
	_, err = server.New(server.Options{Config: cfg, Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err == nil || strings.Count(err.Error(), "envoy rules") != 1 || !strings.Contains(err.Error(), missing) {
		t.Fatalf("server.New with missing Envoy rules: %v, want an error naming %s and saying envoy rules once", err, missing)
	}
}
