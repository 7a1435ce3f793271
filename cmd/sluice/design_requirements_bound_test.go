package main

import (
	"os"
	"strings"
	"testing"
	"time"
)

// sluice design reads at most 1 MiB of -requirements, as
// sim.ReadRequirements does, and refuses more whole: an input that never
// ends (a pipe, /dev/zero, a log given by mistake) is refused once it
// passes 1 MiB, not read into memory until it ends. Here 2 MiB arrive on
// standard input and the pipe stays open.
func TestDesignReadsAtMostOneMiBOfRequirements(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	stdin := os.Stdin
	os.Stdin = r
	defer func() { os.Stdin = stdin }()
	go func() {
		line := "# " + strings.Repeat("x", 1021) + "\n" // 1 KiB comment lines
		for range 2048 {
			if _, err := w.WriteString(line); err != nil {
				return
			}
		}
		// The pipe stays open: an endless producer.
	}()
	defer w.Close() // ends the producer's blocked write
	type result struct {
		code   int
		stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, _, errOut := runSluice(t, "design", "-requirements", "-", "-format", "yaml")
		done <- result{code, errOut}
	}()
	select {
	case res := <-done:
		if res.code != 1 || !strings.Contains(res.stderr, "standard input: longer than 1 MiB") {
			t.Errorf("exit %d, stderr %q; want 1 and the 1 MiB bound named", res.code, res.stderr)
		}
	case <-time.After(10 * time.Second):
		w.Close()
		<-done
		t.Errorf("sluice design -requirements - still reading after 2 MiB and 10 s")
	}
}
