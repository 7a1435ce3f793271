package config_test

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// A key's name labels it in logs and the dashboard, and names it to the
// admin API (/v1/keys/name:acme) and to exempt.keys: two keys of one name
// are refused at the second's name, in keys: or in the keys file.
func TestTwoKeysOfOneNameAreRefused(t *testing.T) {
	_, err := config.Parse("t.yaml", []byte(fmt.Sprintf(`plans:
  free: {limits: [{name: per-minute, algorithm: gcra, quantity: 10, window: 1m}]}
keys:
  - {name: acme, sha256: %x}
  - {name: globex, sha256: %x}
  - {name: acme, sha256: %x}
`, sha256.Sum256([]byte("a")), sha256.Sum256([]byte("b")), sha256.Sum256([]byte("c")))))
	want := `t.yaml:6:12: keys[2].name: "acme" is already the name of keys[0] (line 4): give each key a name of its own`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want %s", err, want)
	}

	_, err = writeKeysConfig(t, keyLine("acme", "pro")+fmt.Sprintf("- {name: inline, sha256: %x}\n", sha256.Sum256([]byte("other"))))
	if err == nil || !strings.Contains(err.Error(), `keys.yaml:2:10: [1].name: "inline" is already the name of keys[0] (`) ||
		!strings.Contains(err.Error(), `sluice.yaml:6): give each key a name of its own`) {
		t.Errorf("error %v, want the keys file's second entry refused at its name", err)
	}

	// Keys without a name have none to share.
	if _, err := config.Parse("t.yaml", []byte(fmt.Sprintf(`plans:
  free: {limits: [{name: per-minute, algorithm: gcra, quantity: 10, window: 1m}]}
keys: [{sha256: %x}, {sha256: %x}]
`, sha256.Sum256([]byte("a")), sha256.Sum256([]byte("b"))))); err != nil {
		t.Errorf("two keys without names: %v", err)
	}
}
