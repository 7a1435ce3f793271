package config_test

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

func keyLine(name, plan string) string {
	return fmt.Sprintf("- {name: %s, sha256: %x, plan: %s}\n", name, sha256.Sum256([]byte(name+"-secret")), plan)
}

// writeKeysConfig writes sluice.yaml (naming keys.yaml, relative to it,
// with one key of its own) and keys.yaml, and loads it.
func writeKeysConfig(t *testing.T, keys string) (*config.Config, error) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "keys.yaml"), []byte(keys), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "sluice.yaml")
	if err := os.WriteFile(file, []byte(`plans:
  free: {limits: [{name: per-minute, algorithm: gcra, quantity: 10, window: 1m}]}
  pro: {limits: [{name: per-minute, algorithm: gcra, quantity: 100, window: 1m}]}
keys_file: keys.yaml
keys:
  `+keyLine("inline", "pro")), 0o600); err != nil {
		t.Fatal(err)
	}
	return config.Load(file)
}

// TestKeysFile: keys_file adds the keys of a second file, relative to the
// configuration, to those of keys:, with their plans and overrides.
func TestKeysFile(t *testing.T) {
	c, err := writeKeysConfig(t, keyLine("acme", "pro")+keyLine("globex", "free")+
		fmt.Sprintf("- {name: initech, sha256: %x, plan: free, limits: [{name: per-minute, algorithm: gcra, quantity: 50, window: 1m}]}\n",
			sha256.Sum256([]byte("initech-secret"))))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(c.KeysFile, string(filepath.Separator)+"keys.yaml") || !filepath.IsAbs(c.KeysFile) {
		t.Errorf("KeysFile %q, want keys.yaml beside the configuration", c.KeysFile)
	}
	for name, want := range map[string]string{"inline": "pro 100", "acme": "pro 100", "globex": "free 10", "initech": "free 50"} {
		k := c.Keys[sha256.Sum256([]byte(name+"-secret"))]
		if k == nil {
			t.Errorf("key %s: not loaded", name)
			continue
		}
		if got := fmt.Sprintf("%s %d", k.Plan.Name, k.Plan.Limits[0].Quantity()); k.Name != name || got != want {
			t.Errorf("key %s: %s %q, want %q", name, k.Name, got, want)
		}
	}
	if empty, err := writeKeysConfig(t, ""); err != nil || len(empty.Keys) != 1 {
		t.Errorf("an empty keys file: %v keys, %v; want the configuration's one", len(empty.Keys), err)
	}
}

// Problems of a keys file are reported at their line in that file.
func TestKeysFileErrorsPointAtItsLines(t *testing.T) {
	for _, c := range []struct{ keys, want string }{
		{keyLine("a", "free") + keyLine("b", "gold"), `keys.yaml:2:93: [1].plan: "gold" is not a plan`},
		{keyLine("a", "free") + "- {name: b, sha256: abc}\n", "keys.yaml:2:21: [1].sha256: want the 64 hex digits"},
		{keyLine("inline", "free"), "keys.yaml:1:26: [0].sha256: the same key is configured twice (keys[0] of "},
		{"- {name: b}\n", "keys.yaml:1:3: [0].sha256: missing"},
		{"{name: b}\n", "keys.yaml:1:1: want a list"},
		{"- [\n", "keys.yaml:"},
		{"- {name: a, sha256: !env KEY_HASH, plan: free}\n", "keys.yaml:1:21: [0].sha256: the tag !env is not read here"},
		// Files appended to one another keep their "---": the keys after
		// it are refused, not left out (their clients would lose their plans).
		{keyLine("a", "free") + "---\n" + keyLine("b", "free"), "keys.yaml:3:1: a second YAML document"},
		{fmt.Sprintf("- {name: c, sha256: %x, limits: [{name: per-minute, algorithm: gcra, quantity: 5, window: 1m, count: failures}]}\n", sha256.Sum256([]byte("c"))),
			"keys.yaml:1:164: [0].limits[0].count: count: belongs on the plan's limit of this name, not on a key's"},
	} {
		_, err := writeKeysConfig(t, c.keys)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.keys, err, c.want)
		}
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "sluice.yaml")
	os.WriteFile(file, []byte("plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\nkeys_file: /dev/zero\n"), 0o600)
	if _, err := config.Load(file); err == nil || !strings.Contains(err.Error(), "sluice.yaml:3:12: keys_file: /dev/zero is not a regular file") {
		t.Errorf("keys_file /dev/zero: %v", err)
	}
}

// A keys file larger than the configuration's bound is refused at the line
// that names it, before its YAML is read.
func TestKeysFileIsBounded(t *testing.T) {
	line := keyLine("k", "free")
	_, err := writeKeysConfig(t, strings.Repeat(line, 4<<20/len(line)+1))
	if err == nil || !strings.Contains(err.Error(), "sluice.yaml:4:12: keys_file:") || !strings.Contains(err.Error(), "holds more than 4194304 bytes") {
		t.Errorf("a keys file over 4 MiB: %v", err)
	}
}
