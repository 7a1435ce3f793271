package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// An interrupted import writes nothing and exits 1, "interrupted", as
// every command a signal ends does. In the pipeline the docs show
// (kubectl get ingress -o yaml | sluice import -from ingress-nginx -),
// Ctrl-C goes to the whole process group: the producer dies mid-stream
// and import reads the end of its input; what it read may be a part, and
// no sluice.yaml missing the rest is written as a finished import.
func TestAnInterruptedImportWritesNothing(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin := os.Stdin
	os.Stdin = r
	defer func() { os.Stdin = stdin; r.Close() }()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := filepath.Join(t.TempDir(), "migration")
	done := make(chan int, 1)
	var out, errOut bytes.Buffer
	go func() {
		done <- run(ctx, []string{"import", "-from", "nginx", "-dir", dir, "-"}, &out, &errOut)
	}()
	time.Sleep(100 * time.Millisecond)
	cancel() // Ctrl-C: the signal reaches sluice…
	// … and the producer, which dies having written a part of its output.
	w.WriteString("http {\n  limit_req_zone $binary_remote_addr zone=one:10m rate=10r/s;\n  server {\n    location /a {\n      limit_req zone=one;\n    }\n  }\n}\n")
	w.Close()
	var code int
	select {
	case code = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("import still running 10 s after its input ended")
	}
	_, statErr := os.Stat(filepath.Join(dir, "sluice.yaml"))
	if code != 1 || !strings.Contains(errOut.String(), "interrupted") || statErr == nil {
		t.Errorf("interrupted import: exit %d, stderr %q, sluice.yaml written: %v; want exit 1, \"interrupted\", nothing written",
			code, errOut.String(), statErr == nil)
	}
}
