package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// Several issuers whose subject prefixes differ, one beginning another's
// ("" and "svc."), are refused at load, naming both and what to do: a
// token of the first whose subject is "svc.alice" would be the second's
// alice. One prefix for all (the same people at two issuers) loads.
func TestJWTIssuersWhosePrefixesOverlapAreRefused(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("0123456789abcdef0123456789abcdef"), 0o600); err != nil {
		t.Fatal(err)
	}
	issuers := func(users, services string) string {
		return "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\nidentity:\n  jwt:\n" +
			"    - {name: users, secret_file: " + secret + ", issuer: https://idp.example/" + users + "}\n" +
			"    - {name: services, secret_file: " + secret + ", issuer: https://cluster.example/" + services + "}\n"
	}
	_, err := config.Parse("t.yaml", []byte(issuers("", ", subject_prefix: svc.")))
	if err == nil || !strings.Contains(err.Error(), `issuers users and services: subject_prefix "" begins "svc."`) {
		t.Errorf("no prefix beside svc.: %v", err)
	}
	for _, c := range [][2]string{{", subject_prefix: idp.", ", subject_prefix: svc."}, {"", ""}} {
		if _, err := config.Parse("t.yaml", []byte(issuers(c[0], c[1]))); err != nil {
			t.Errorf("prefixes %q and %q: %v", c[0], c[1], err)
		}
	}
}
