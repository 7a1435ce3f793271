package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// sluice check lists the limits that count by the answer and says which
// ways of serving never see it.
func TestCheckSaysWhatCountsByTheAnswer(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"check", "../../examples/rules.yaml"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{"  reports counts only successes\n", "  completions counts what the answer's X-Usage-Tokens reports, at most the request's cost\n", "forward-auth and Envoy count every request they admit"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
