package config_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// A token or a certificate names one caller of the admin listener: a second
// caller with the same one is refused at its line, since the server would
// answer one's requests with the other's scopes.
func TestCallersDoNotShareATokenOrACertificate(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	hash := strings.Repeat("ab", 32)
	for _, c := range []struct{ name, callers, want string }{
		{"the same token", "    - {name: nginx, token_sha256: " + hash + ", scopes: [check]}\n" +
			"    - {name: ops, token_sha256: " + hash + ", scopes: [admin]}\n",
			`c.yaml:7:33: admin.callers[1].token_sha256: the same token as caller "nginx"`},
		{"the same token in upper case", "    - {name: nginx, token_sha256: " + hash + ", scopes: [check]}\n" +
			"    - {name: ops, token_sha256: " + strings.ToUpper(hash) + ", scopes: [admin]}\n",
			`c.yaml:7:33: admin.callers[1].token_sha256: the same token as caller "nginx"`},
		{"the same certificate", "    - {name: billing, certificate: billing.internal, scopes: [check]}\n" +
			"    - {name: ops, certificate: billing.internal, scopes: [admin]}\n",
			`c.yaml:7:32: admin.callers[1].certificate: "billing.internal" already identifies caller "billing"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := config.Parse("c.yaml", []byte(plans+"admin:\n  tls: {cert_file: a.pem, key_file: a-key.pem, client_ca_file: ca.pem}\n  callers:\n"+c.callers))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %s", err, c.want)

			}
		})
	}
	other := strings.Repeat("cd", 32)
	if _, err := config.Parse("c.yaml", []byte(plans+"admin:\n  callers:\n"+
		"    - {name: nginx, token_sha256: "+hash+", scopes: [check]}\n"+
		"    - {name: ops, token_sha256: "+other+", scopes: [admin]}\n")); err != nil {
		t.Errorf("two callers with tokens of their own: %v", err)
	}
}
