package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/sluice-dev/sluice/config"
)

// openInput opens the file at name for reading, or standard input when
// name is "-", as a FILE argument is read by import, simulate -trace and
// design -requirements. Closing standard input's reader leaves it open.
func openInput(name string) (io.ReadCloser, error) {
	if name == "-" {
		return io.NopCloser(os.Stdin), nil
	}
	return os.Open(name)
}

// inputName is how errors and reports name the input name: "standard
// input" for "-", else name itself.
func inputName(name string) string {
	if name == "-" {
		return "standard input"
	}
	return name
}

// readSecretOnce returns the secret at path as config.ReadSecret does (one
// trailing newline left out; empty, or more than 64 KiB, is an error),
// and reads it from a pipe or a terminal too: -token-file <(pass show
// sluice/admin), which the shell names /dev/fd/N, hands a secret over
// without writing it to disk. A command reads it once; the server, which
// re-reads its secret files on reload, takes regular files only. When ctx
// ends first, the read is given up with ctx's error (a pipe nobody writes
// to would wait for ever).
func readSecretOnce(ctx context.Context, path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil || st.Mode()&(os.ModeNamedPipe|os.ModeCharDevice) == 0 {
		return config.ReadSecret(path) // a regular file, or the error naming why not
	}
	b, err := untilDone(ctx, func() ([]byte, error) {
		f, err := os.Open(path) // opening a named pipe waits for a writer
		if err != nil {
			return nil, err
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, config.MaxSecretBytes+1))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return b, nil
	})
	if err != nil {
		return "", err
	}
	if len(b) > config.MaxSecretBytes {
		return "", fmt.Errorf("%s holds more than %d bytes", path, config.MaxSecretBytes)
	}
	return config.SecretText(path, b)
}

// untilDone returns what read returns, or ctx's error when ctx ends first
// (read then goes on, its result dropped: a read of a pipe or of standard
// input cannot be interrupted).
func untilDone(ctx context.Context, read func() ([]byte, error)) ([]byte, error) {
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := read()
		done <- result{b, err}
	}()
	select {
	case r := <-done:
		return r.b, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
