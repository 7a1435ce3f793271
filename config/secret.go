package config

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// maxSecretBytes bounds a secret file: a password, a token, never more.
const maxSecretBytes = 64 << 10

// ReadSecret returns the content of the file at path less one trailing
// newline ("\n" or "\r\n"), as a secret mounted from Kubernetes, a systemd
// credential or `echo secret > file` holds it. An empty secret, or a file
// of more than 64 KiB, is an error.
func ReadSecret(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSecretBytes+1))
	if err != nil {
		return "", err
	}
	if len(b) > maxSecretBytes {
		return "", fmt.Errorf("%s holds more than %d bytes: not a password", path, maxSecretBytes)
	}
	s := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if s == "" {
		return "", errors.New(path + " is empty")
	}
	return s, nil
}
