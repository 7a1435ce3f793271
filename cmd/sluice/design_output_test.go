package main

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// closeFails is a file whose writes succeed and whose Close reports what
// a full disk reports there.
type closeFails struct{ strings.Builder }

var errFull = errors.New("no space left on device")

func (*closeFails) Close() error { return errFull }

func TestDesignOutputReportsAFailedClose(t *testing.T) {
	for _, format := range []string{"markdown", "yaml", "json"} {
		t.Run(format, func(t *testing.T) {
			var stderr strings.Builder
			o := designOutput{out: "design.md", format: format, create: func(string) (io.WriteCloser, error) { return &closeFails{}, nil }}
			err := o.write("config", "# analysis", struct{}{}, io.Discard, &stderr)
			if !errors.Is(err, errFull) {
				t.Errorf("write = %v, want the error of Close", err)
			}
			if strings.Contains(stderr.String(), "written") {
				t.Errorf("stderr says %q of an analysis that was not written", stderr.String())
			}
		})
	}
}
