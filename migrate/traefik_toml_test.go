package migrate_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportTraefikTOMLIsRefusedSayingSo: Traefik's documentation shows
// each dynamic configuration in TOML beside YAML. The import reads YAML
// only; a TOML file is known for Traefik's and refused saying that TOML is
// not read, not with a YAML parser's complaint about line 1.
func TestImportTraefikTOMLIsRefusedSayingSo(t *testing.T) {
	const src = `[http.routers]
  [http.routers.api]
    rule = "Host(` + "`api.example.com`" + `)"
    service = "api"
    middlewares = ["api-ratelimit"]

[http.middlewares]
  [http.middlewares.api-ratelimit.rateLimit]
    average = 100
    burst = 50
`
	if got, ok := migrate.Detect(src); !ok || got != "traefik" {
		t.Errorf("Detect = %q (%v), want traefik", got, ok)
	}
	_, err := migrate.Import("traefik", src, "dynamic.toml")
	if err == nil || !strings.Contains(err.Error(), "TOML") || !strings.Contains(err.Error(), "YAML") {
		t.Errorf("err = %v, want TOML refused, asking for YAML", err)
	}
}
