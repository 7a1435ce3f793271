package config_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// An error of the keys file hides none of the configuration's at the same
// line and column: a place is a file's. Here plan pro has no limit
// (sluice.yaml:3:3) and the keys file's second entry (keys.yaml:3:3) has
// no sha256: both are told at once.
func TestAnErrorOfTheKeysFileHidesNoneOfTheConfigurations(t *testing.T) {
	dir := t.TempDir()
	keys := "- {name: a, sha256: 9f8cfdb17116bf0e2a44e071454f25594cb9b8737bf331e6a2f0b30550572f29, plan: free}\n# b\n- {name: b, plan: free}\n"
	conf := "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1s}]}\n  pro: {limits: []}\nkeys_file: keys.yaml\n"
	if err := os.WriteFile(filepath.Join(dir, "keys.yaml"), []byte(keys), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "sluice.yaml")
	if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := config.Load(file)
	var own, other bool
	for _, e := range config.Errors(err) {
		switch filepath.Base(e.File) {
		case "sluice.yaml":
			own = own || e.Line == 3 && e.Col == 3
		case "keys.yaml":
			other = other || e.Line == 3 && e.Col == 3
		}
	}
	if !own || !other {
		t.Errorf("errors:\n%v\nwant both the plan's (sluice.yaml:3:3, no limit) and the key's (keys.yaml:3:3, no sha256)", err)
	}
}
