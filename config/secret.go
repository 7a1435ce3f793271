package config

import (
	"errors"
	"strings"

	"github.com/sluice-dev/sluice/internal/boundedfile"
)

// maxSecretBytes bounds a secret file: a password, a token, never more.
const maxSecretBytes = 64 << 10

// ReadSecret returns the content of the file at path less one trailing
// newline ("\n" or "\r\n"), as a secret mounted from Kubernetes, a systemd
// credential or `echo secret > file` holds it. An empty secret, or a file
// of more than 64 KiB, is an error.
func ReadSecret(path string) (string, error) {
	b, err := readBounded(path, maxSecretBytes)
	if err != nil {
		return "", err
	}
	s := string(b)
	if t, ok := strings.CutSuffix(s, "\n"); ok {
		s = strings.TrimSuffix(t, "\r")
	}
	if s == "" {
		return "", errors.New(path + " is empty")
	}
	return s, nil
}

// maxPEMBytes bounds a certificate, key or CA bundle file (a system's whole
// bundle is about 200 KB).
const maxPEMBytes = 1 << 20

// readBounded reads the regular file at path of at most limit bytes (see
// boundedfile.Read).
func readBounded(path string, limit int64) ([]byte, error) { return boundedfile.Read(path, limit) }
