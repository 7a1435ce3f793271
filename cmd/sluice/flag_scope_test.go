package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// -n is top's count: given to another command it is refused as -plan and
// -limit are, with a message naming the command used (never one about
// top alone); given to top, out of 1 to 512, it is refused for its value.
func TestKeysNIsForTopAlone(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-n", "0", "inspect", "key:x"}, "-n is for top, not inspect"},
		{[]string{"-n", "5", "reset", "key:x"}, "-n is for top, not reset"},
		{[]string{"-n", "0", "top"}, "-n 0: top lists 1 to 512 subjects"},
	} {
		args := append([]string{"keys", "-admin", "http://127.0.0.1:1"}, tc.args...)
		code, _, errOut := runSluice(t, args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d, want 2 and %q; stderr:\n%s", tc.args, code, tc.want, errOut)
		}
	}
}

// A negative -gc-heap-floor is no heap size: a usage error naming the
// flag, before anything is served, not read as 0 (Go's default) in
// silence. (A serve that took it would serve until ctx ends.)
func TestServeRefusesANegativeHeapFloor(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	code := run(ctx, []string{"serve", "-gc-heap-floor", "-1", "-listen", "127.0.0.1:0", "-admin-listen", "127.0.0.1:0"}, &out, &errOut)
	if code != 2 || !strings.Contains(errOut.String(), "-gc-heap-floor") {
		t.Errorf("serve -gc-heap-floor -1: exit %d, want 2 and a message naming -gc-heap-floor; stderr:\n%s", code, errOut.String())
	}
}
