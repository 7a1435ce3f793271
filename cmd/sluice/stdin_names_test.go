package main

import (
	"strings"
	"testing"
)

// A FILE given as "-" is named "standard input" in errors (inputName), as
// import names it: simulate's refusal of a bad line of its -trace, and
// design's of a bad value of its -requirements, say where the line came
// from, never "-: line 2".
func TestErrorsNameAFileReadFromStandardInputSo(t *testing.T) {
	for _, tc := range []struct {
		stdin string
		args  []string
	}{
		{"0,a\nnot-a-time,a\n", []string{"simulate", "-trace", "-", "-limit", "1/1s"}},
		{"rate: 100/1m\nprecision: exact\n", []string{"design", "-requirements", "-"}},
	} {
		var code int
		var errOut string
		withStdin(t, tc.stdin, func() {
			code, _, errOut = runSluice(t, tc.args...)
		})
		if code != 1 || !strings.Contains(errOut, "standard input") || strings.Contains(errOut, " -:") {
			t.Errorf("%q with a bad line on standard input: exit %d; want 1 and the input named \"standard input\"; stderr:\n%s", tc.args, code, errOut)
		}
	}
}

// A skipped line of a trace read from standard input is named so too.
func TestSkippedLinesOfAStandardInputTraceNameIt(t *testing.T) {
	var code int
	var errOut string
	withStdin(t, "0,a\nnot-a-time,a\n", func() {
		code, _, errOut = runSluice(t, "simulate", "-trace", "-", "-limit", "1/1s", "-skip-bad-lines")
	})
	if code != 0 || !strings.Contains(errOut, "standard input: line 2") {
		t.Errorf("simulate -trace - -skip-bad-lines: exit %d; want 0 and the skipped line named \"standard input: line 2\"; stderr:\n%s", code, errOut)
	}
}
