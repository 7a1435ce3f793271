package config_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// A file with more problems than are listed says how many more it has,
// after the ones listed in file order, and the problems of a keys file
// past those count too.
func TestProblemsPastTheListedOnesAreCounted(t *testing.T) {
	var b strings.Builder
	for i := range 60 {
		fmt.Fprintf(&b, "unknown_%d: 1\n", i)
	}
	_, err := config.Parse("a.yaml", []byte(b.String()))
	errs := config.Errors(err)
	if len(errs) != 51 {
		t.Fatalf("%d errors, want 50 and a count of the rest: %v", len(errs), err)
	}
	if errs[0].Line != 1 || errs[49].Line != 50 {
		t.Errorf("errors listed from line %d to %d, want 1 to 50", errs[0].Line, errs[49].Line)
	}
	if got, want := errs[50].Error(), "a.yaml: and 10 more problems, not listed (only the first 50 are)"; got != want {
		t.Errorf("last error %q, want %q", got, want)
	}
}
