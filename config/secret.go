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
	b, err := readBounded(path, maxSecretBytes)
	if err != nil {
		return "", err
	}
	s := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if s == "" {
		return "", errors.New(path + " is empty")
	}
	return s, nil
}

// maxPEMBytes bounds a certificate, key or CA bundle file (a system's whole
// bundle is about 200 KB).
const maxPEMBytes = 1 << 20

// readBounded reads the regular file at path (or a link to one), which
// must hold at most limit bytes: a path that names a device, a pipe or a
// stray large file is an error, not a read that blocks or never ends.
func readBounded(path string, limit int64) ([]byte, error) {
	if st, err := os.Stat(path); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path) // opening a pipe would wait for a writer
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s holds more than %d bytes", path, limit)
	}
	return b, nil
}
