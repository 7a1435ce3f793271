package config_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// ReadSecret removes one trailing newline, "\n" or "\r\n", and nothing
// else: a secret whose last byte is a lone carriage return (a random binary
// secret ends with 0x0d once in 256) is returned whole, or the HMAC key, the
// settle secret or the notify signing key would differ from the peer's.
func TestReadSecretKeepsALoneTrailingCarriageReturn(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ file, want string }{
		{"0123456789abcdef0123456789abcdef\r", "0123456789abcdef0123456789abcdef\r"}, // no newline: kept whole
		{"0123456789abcdef0123456789abcdef\r\n", "0123456789abcdef0123456789abcdef"}, // \r\n: removed (documented)
		{"0123456789abcdef0123456789abcdef\n", "0123456789abcdef0123456789abcdef"},   // \n: removed (documented)
	} {
		p := filepath.Join(dir, "secret")
		if err := os.WriteFile(p, []byte(c.file), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := config.ReadSecret(p)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("ReadSecret of a file holding %q = %q, want %q (only one trailing \"\\n\" or \"\\r\\n\" is removed)", c.file, got, c.want)
		}
	}
}
