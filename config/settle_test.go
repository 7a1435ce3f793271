package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

func TestSettleSecret(t *testing.T) {
	dir := t.TempDir()
	good, short := filepath.Join(dir, "good.secret"), filepath.Join(dir, "short.secret")
	os.WriteFile(good, []byte(strings.Repeat("0f", 32)+"\n"), 0o600)
	os.WriteFile(short, []byte("hunter2\n"), 0o600)
	plans := "plans:\n  free:\n    limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]\n"
	cfg, err := config.Parse(filepath.Join(dir, "c.yaml"), []byte("settle: {secret_file: good.secret}\n"+plans))
	if err != nil || string(cfg.Settle.Secret) != strings.Repeat("0f", 32) {
		t.Fatalf("%v, secret %q", err, cfg.Settle.Secret)
	}
	for text, want := range map[string]string{
		"settle: {secret_file: short.secret}\n":   "has 7 bytes: give at least 32 (openssl rand -hex 32)",
		"settle: {secret_file: missing.secret}\n": "missing.secret",
		"settle: {secret: abc}\n":                 "settle.secret",
	} {
		if _, err := config.Parse(filepath.Join(dir, "c.yaml"), []byte(text+plans)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
}
