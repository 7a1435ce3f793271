package deploy_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/testpki"
)

// credentialsDir is where systemd puts the credentials of sluice.service.
const credentialsDir = "/run/credentials/sluice.service/"

// secretSettings are the settings of a configuration that name a file
// holding a secret, which the unit's dynamic user cannot read unless it
// is world-readable.
var secretSettings = map[string]bool{"key_file": true, "password_file": true, "sentinel_password_file": true, "secret_file": true}

// TestSystemdSecretsAreCredentials: docs/operations.md's systemd section
// hands every kind of secret to the unit's dynamic user as a credential
// (LoadCredential= in a drop-in that systemd-analyze verifies with the
// unit), its configuration reads each where systemd puts it, a certificate
// beside its key (both copies are made at start: a certificate read from
// disk, renewed against the key's old copy, would be refused at its
// reload), and it says that a renewed credential needs a restart. That
// configuration, with files at those paths, loads; and every credential
// path that docs/operations.md or deploy/ names is one the drop-in loads.
func TestSystemdSecretsAreCredentials(t *testing.T) {
	t.Parallel()
	doc := readFile(t, "../docs/operations.md")
	start := strings.Index(doc, "\n## systemd\n")
	if start < 0 {
		t.Fatal("docs/operations.md has no ## systemd section")
	}
	section := doc[start+1:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}

	// The drop-in.
	ini := regexp.MustCompile("(?ms)^```ini\n(.*?)^```").FindStringSubmatch(section)
	if ini == nil {
		t.Fatal("docs/operations.md's systemd section shows no drop-in (```ini) loading the secrets as credentials: the dynamic user reads no file that is not world-readable")
	}
	ids := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^LoadCredential=([^:\s]+):(\S+)$`).FindAllStringSubmatch(ini[1], -1) {
		ids[m[1]] = m[2]
	}
	if len(ids) == 0 {
		t.Fatalf("the systemd section's drop-in has no LoadCredential=ID:PATH:\n%s", ini[1])
	}
	dir := t.TempDir()
	unit := strings.ReplaceAll(readFile(t, unitFile), "/usr/local/bin/sluice", "/bin/true")
	if err := os.MkdirAll(filepath.Join(dir, "sluice.service.d"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"sluice.service": unit, "sluice.service.d/credentials.conf": ini[1]} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	verify := exec.Command(systemdAnalyze(t), "verify", "./sluice.service") // from its directory: with its drop-ins
	verify.Dir = dir
	if out, err := verify.CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify of the unit with the systemd section's drop-in: %v\n%s", err, out)
	}

	// The configuration that reads them.
	block := regexp.MustCompile("(?ms)^```yaml\n(.*?)^```").FindStringSubmatch(section)
	if block == nil {
		t.Fatal("docs/operations.md's systemd section shows no configuration (```yaml) naming the credentials")
	}
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(block[1]), &root); err != nil {
		t.Fatalf("the systemd section's configuration: %v", err)
	}
	used := map[string]bool{}
	pairs := map[string]string{} // a key's credential → its certificate's
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			fields := map[string]string{}
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i].Value, n.Content[i+1]
				fields[k] = v.Value
				if secretSettings[k] {
					used[k] = true
					if !strings.HasPrefix(v.Value, credentialsDir) {
						t.Errorf("the systemd section's configuration reads %s from %s, not from a credential (%s…)", k, v.Value, credentialsDir)
					}
				}
			}
			if key, ok := strings.CutPrefix(fields["key_file"], credentialsDir); ok {
				cert, ok := strings.CutPrefix(fields["cert_file"], credentialsDir)
				if !ok {
					t.Errorf("key_file %s is a credential and its cert_file %q is not: a certificate renewed on disk would be read against the key's old copy", fields["key_file"], fields["cert_file"])
				}
				pairs[key] = cert
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&root)
	for _, k := range []string{"key_file", "password_file", "secret_file"} {
		if !used[k] {
			t.Errorf("the systemd section's configuration has no %s: show how each kind of secret is read", k)
		}
	}

	// Every credential path named anywhere is loaded by the drop-in.
	named := regexp.MustCompile(regexp.QuoteMeta(credentialsDir) + `([A-Za-z0-9](?:[A-Za-z0-9_.-]*[A-Za-z0-9])?)`)
	for _, name := range []string{"../docs/operations.md", "sluice.yaml", unitFile} {
		for _, m := range named.FindAllStringSubmatch(readFile(t, name), -1) {
			if _, ok := ids[m[1]]; !ok {
				t.Errorf("%s names the credential %s, which the systemd section's drop-in does not load", name, m[0])
			}
		}
	}

	// The configuration loads with the credentials in place.
	creds := t.TempDir()
	ca := testpki.New(t, "credentials CA")
	for key, cert := range pairs {
		certPEM, keyPEM := serverPEM(t, ca, cert)
		writeSecret(t, filepath.Join(creds, cert), certPEM)
		writeSecret(t, filepath.Join(creds, key), keyPEM)
	}
	for id := range ids {
		if _, err := os.Stat(filepath.Join(creds, id)); os.IsNotExist(err) {
			writeSecret(t, filepath.Join(creds, id), []byte("6f1d0a4c9b2e83f75d60a1c4e9b8f7a2d3c5e6f708192a3b4c5d6e7f8091a2b3\n"))
		}
	}
	cfg := strings.ReplaceAll(block[1], credentialsDir, creds+"/") + `
plans:
  free: {limits: [{name: per-second, algorithm: token-bucket, quantity: 5, window: 1s}]}
default_plan: free
`
	if _, err := config.Parse("the systemd section's configuration", []byte(cfg)); err != nil {
		t.Errorf("the systemd section's configuration, its credentials in place, does not load:\n%v", err)
	}

	if !strings.Contains(section, "systemctl restart sluice") {
		t.Error("the systemd section does not say that a credential renewed on disk reaches sluice at `systemctl restart sluice` (systemd copies it at start; a reload does not)")
	}
}

// serverPEM issues from ca a server certificate for localhost and
// 127.0.0.1 named name, and returns it and its key, in PEM.
func serverPEM(t *testing.T, ca *testpki.CA, name string) (certPEM, keyPEM []byte) {
	t.Helper()
	ca.Server(t, name)
	return []byte(readFile(t, ca.File(name))), []byte(readFile(t, ca.KeyFile(name)))
}

// writeSecret writes data to a file only its owner reads, as systemd
// writes a credential.
func writeSecret(t *testing.T, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(name, data, 0o400); err != nil {
		t.Fatal(err)
	}
}
