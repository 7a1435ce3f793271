package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// CheckWithoutFiles opens no file a configuration names, so that what it
// answers never depends on the disk of the host it runs on: each field
// that names a file is checked as Parse checks it but for the file's
// content. Every file below is one Parse opens (and refuses, as missing
// or as not what it should hold); CheckWithoutFiles accepts them all.
func TestCheckWithoutFilesOpensNoNamedFile(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "redis-password")
	if err := os.WriteFile(secret, []byte("db_password=hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const plans = "plans:\n  free: {limits: [{name: hourly, algorithm: fixed-window, quantity: 10, window: 1h}]}\n"
	for _, c := range []struct{ name, yaml string }{
		{"a keys file", "keys_file: /nonexistent/keys.yaml\n"},
		{"a JWK Set", "identity:\n  jwt: {jwks_file: /nonexistent/jwks.json, algorithms: [RS256]}\n"},
		{"a JWK Set that is another file", "identity:\n  jwt: {jwks_file: " + secret + "}\n"},
		{"a JWK Set that is a folder", "identity:\n  jwt: {jwks_file: " + dir + "}\n"},
		{"an HMAC secret", "identity:\n  jwt: {secret_file: /nonexistent/secret, algorithms: [HS512]}\n"},
		{"a JWKS server's CA", "identity:\n  jwt: {jwks_url: \"https://idp.example.com/keys\", ca_file: /nonexistent/ca.pem}\n"},
		{"a listener's certificate", "tls: {cert_file: /nonexistent/cert.pem, key_file: /nonexistent/key.pem}\n"},
		{"the admin listener's client CA", "admin:\n  tls: {cert_file: /nonexistent/cert.pem, key_file: /nonexistent/key.pem, client_ca_file: /nonexistent/ca.pem}\n"},
		{"the upstream's client certificate", "upstream: https://api.internal\nupstream_tls: {cert_file: /nonexistent/cert.pem, key_file: /nonexistent/key.pem, ca_file: /nonexistent/ca.pem}\n"},
		{"Redis's password and CA", "store:\n  type: redis\n  redis: {addresses: [\"r:6379\"], password_file: /nonexistent/password, tls: {ca_file: /nonexistent/ca.pem}}\n"},
		{"the Sentinels' password", "store:\n  type: redis\n  redis: {addresses: [\"r:26379\"], mode: sentinel, master_name: m, sentinel_password_file: /nonexistent/password}\n"},
		{"the notifications' secret", "notify: {url: \"https://billing.example.com/hook\", secret_file: /nonexistent/secret, limits: [hourly]}\n"},
		{"the settle secret", "settle: {secret_file: /nonexistent/secret}\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := []byte(c.yaml + plans)
			if _, err := config.Parse("t.yaml", data); err == nil {
				t.Fatalf("Parse accepts the configuration: it does not read the file this case names")
			}
			if err := config.CheckWithoutFiles("t.yaml", data); err != nil {
				t.Errorf("CheckWithoutFiles: %v, want nil (no file opened)", err)
			}
		})
	}
}

// CheckWithoutFiles refuses all that Parse refuses but the content of the
// files named: a field naming a file is still a path, and the rest of the
// configuration is checked whole, with Parse's errors.
func TestCheckWithoutFilesChecksAllButTheFiles(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: hourly, algorithm: fixed-window, quantity: 10, window: 1h}]}\n"
	for _, c := range []struct{ name, yaml, want string }{
		{"an unknown field", "keys_file: /nonexistent/keys.yaml\nkeys_fil: x\n", "t.yaml:2:1: keys_fil: unknown field"},
		{"two sources of JWT keys", "identity:\n  jwt: {jwks_file: /nonexistent/jwks.json, secret_file: /nonexistent/secret}\n",
			"identity.jwt: name exactly one of jwks_url, discover, jwks_file and secret_file"},
		{"HMAC with a JWK Set", "identity:\n  jwt: {jwks_file: /nonexistent/jwks.json, algorithms: [HS256]}\n",
			"HS256 cannot be accepted with jwks_url or jwks_file"},
		{"a certificate without its key", "tls: {cert_file: /nonexistent/cert.pem}\n", "tls: cert_file and key_file go together"},
		{"a CA of no JWKS server", "identity:\n  jwt: {jwks_file: /nonexistent/jwks.json, ca_file: /nonexistent/ca.pem}\n",
			"identity.jwt.ca_file: only for a jwks_url or discover"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := config.CheckWithoutFiles("t.yaml", []byte(c.yaml+plans))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("CheckWithoutFiles: %v, want %q", err, c.want)
			}
		})
	}
}
