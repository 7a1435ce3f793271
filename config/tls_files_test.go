package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/testpki"
)

// A certificate, key or CA file of a tls: section that cannot be read, or
// holds no certificate, is refused at the line that names it, not at the
// section's first line; a certificate and key that do not pair are refused
// at the section, which names both.
func TestTLSFilesAreRefusedAtTheirLine(t *testing.T) {
	ca := testpki.New(t, "ca")
	ca.Server(t, "server")
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "not.pem")
	os.WriteFile(notPEM, []byte("no certificate here\n"), 0o600)
	cert, key := ca.File("server"), ca.KeyFile("server")
	const plans = "plans:\n  free: {limits: [{name: hourly, algorithm: gcra, quantity: 10, window: 1h}]}\n"
	for _, c := range []struct{ name, yaml, want string }{
		{"a listener's certificate that is not there", "tls:\n  key_file: " + key + "\n  cert_file: /nonexistent/cert.pem\n",
			`t.yaml:3:14: tls.cert_file: stat /nonexistent/cert.pem: no such file or directory`},
		{"a listener's key that is not there", "tls:\n  cert_file: " + cert + "\n  key_file: /nonexistent/key.pem\n",
			`t.yaml:3:13: tls.key_file: stat /nonexistent/key.pem: no such file or directory`},
		{"a client CA with no certificate", "admin:\n  tls:\n    cert_file: " + cert + "\n    key_file: " + key + "\n    client_ca_file: " + notPEM + "\n",
			`t.yaml:5:21: admin.tls.client_ca_file: ` + notPEM + ` holds no PEM certificate`},
		{"a certificate and key that do not pair", "tls:\n  cert_file: " + cert + "\n  key_file: " + notPEM + "\n",
			`t.yaml:2:3: tls: cert_file ` + cert + ` with key_file ` + notPEM + `: `},
		{"Redis's CA that is not there", "store:\n  type: redis\n  redis:\n    addresses: [\"r:6380\"]\n    tls:\n      server_name: r\n      ca_file: /nonexistent/ca.pem\n",
			`t.yaml:7:16: store.redis.tls.ca_file: stat /nonexistent/ca.pem: no such file or directory`},
		{"Redis's CA with no certificate", "store:\n  type: redis\n  redis:\n    addresses: [\"r:6380\"]\n    tls:\n      server_name: r\n      ca_file: " + notPEM + "\n",
			`t.yaml:7:16: store.redis.tls.ca_file: ` + notPEM + ` holds no PEM certificate`},
		{"a client key that is not there", "upstream: https://api.internal\nupstream_tls:\n  cert_file: " + cert + "\n  key_file: /nonexistent/key.pem\n",
			`t.yaml:4:13: upstream_tls.key_file: stat /nonexistent/key.pem: no such file or directory`},
		{"a client certificate that is not there", "upstream: https://api.internal\nupstream_tls:\n  key_file: " + key + "\n  cert_file: /nonexistent/cert.pem\n",
			`t.yaml:4:14: upstream_tls.cert_file: stat /nonexistent/cert.pem: no such file or directory`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := config.Parse("t.yaml", []byte(c.yaml+plans))
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("error:\n%v\nwant it to start:\n%s", err, c.want)
			}
		})
	}
}
