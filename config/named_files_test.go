package config_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// TestNamedFilesReadsAConfigurationThatDoesNotLoad: the files a
// configuration names are read from it without validating it (the server
// watches those of one it refused), relative ones from its folder; a field
// of the wrong type names nothing, and no more than max are named.
func TestNamedFilesReadsAConfigurationThatDoesNotLoad(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "sluice.yaml")
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("keys_file: keys-new.yaml\ntls: {cert_file: /etc/tls.crt, key_file: tls.key}\nadmin: {tls: {client_ca_file: ca.pem}}\n" +
		"upstream_tls: {ca_file: up.pem}\nenvoy: {rules: [rules/, 7]}\nplans: nope\n")
	files, rules := config.NamedFiles(file, 16)
	wantFiles := []string{"/etc/tls.crt", filepath.Join(dir, "tls.key"), filepath.Join(dir, "ca.pem"), filepath.Join(dir, "up.pem"), filepath.Join(dir, "keys-new.yaml")}
	if !slices.Equal(files, wantFiles) || !slices.Equal(rules, []string{filepath.Join(dir, "rules")}) {
		t.Errorf("named: files %v rules %v, want files %v rules [%s]", files, rules, wantFiles, filepath.Join(dir, "rules"))
	}
	text := "envoy: {rules: ["
	for i := range 40 {
		text += "r" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + ".yaml, "
	}
	write(text + "]}\n")
	if _, rules := config.NamedFiles(file, 16); len(rules) != 16 {
		t.Errorf("40 rules paths: %d named, want 16", len(rules))
	}
	write("keys_file: [not, a, path]\n")
	if files, rules := config.NamedFiles(file, 16); len(files)+len(rules) != 0 {
		t.Errorf("a keys_file that is a list: %v %v, want nothing", files, rules)
	}
}
