package config

import (
	"errors"
	"strings"

	"github.com/sluice-dev/sluice/internal/boundedfile"
)

// MaxSecretBytes bounds a secret: a password, a token, never more than
// 64 KiB.
const MaxSecretBytes = 64 << 10

// ReadSecret returns the content of the file at path less one trailing
// newline ("\n" or "\r\n"), as a secret mounted from Kubernetes, a systemd
// credential or `echo secret > file` holds it. An empty secret, or a file
// of more than MaxSecretBytes, is an error.
func ReadSecret(path string) (string, error) {
	b, err := readBounded(path, MaxSecretBytes)
	if err != nil {
		return "", err
	}
	return SecretText(path, b)
}

// SecretText returns the secret b holds as ReadSecret reads it from a
// file: less one trailing newline; empty is an error naming name. A
// caller that reads b from elsewhere (a pipe) bounds it by MaxSecretBytes.
func SecretText(name string, b []byte) (string, error) {
	s := string(b)
	if t, ok := strings.CutSuffix(s, "\n"); ok {
		s = strings.TrimSuffix(t, "\r")
	}
	if s == "" {
		return "", errors.New(name + " is empty")
	}
	return s, nil
}

// maxPEMBytes bounds a certificate, key or CA bundle file (a system's whole
// bundle is about 200 KB).
const maxPEMBytes = 1 << 20

// readBounded reads the regular file at path of at most limit bytes (see
// boundedfile.Read).
func readBounded(path string, limit int64) ([]byte, error) { return boundedfile.Read(path, limit) }
