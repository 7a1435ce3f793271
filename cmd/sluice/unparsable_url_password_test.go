package main

import (
	"strings"
	"testing"
)

// healthcheck, keys and bench never print the password of the URL they
// are given, url.Parse reading it or not (redact.URL): not when it holds
// a "%" not followed by two hex digits or a character such as "^" that
// user information may not hold (both common in generated passwords), nor
// when its "http://" is left out and url.Parse reads the user name as the
// scheme.
func TestAURLsPasswordIsNeverPrintedWhateverURLParseMakesOfIt(t *testing.T) {
	for _, args := range [][]string{
		{"healthcheck", "http://admin:hunter2^x@127.0.0.1:1/readyz"},
		{"healthcheck", "http://admin:hunter2%x@127.0.0.1:1/readyz"},
		{"healthcheck", "admin:hunter2@127.0.0.1:1/readyz"},
		{"keys", "-admin", "http://admin:hunter2^x@127.0.0.1:1", "top"},
		{"keys", "-admin", "admin:hunter2@127.0.0.1:1", "top"},
		{"bench", "-n", "1", "http://admin:hunter2%x@127.0.0.1:1/"},
		{"bench", "-n", "1", "admin:hunter2@127.0.0.1:1/"},
	} {
		code, stdout, stderr := runSluice(t, args...)
		if strings.Contains(stdout+stderr, "hunter2") {
			t.Errorf("sluice %s: exit %d, the password is printed: stdout %q, stderr %q", strings.Join(args, " "), code, stdout, stderr)
		}
	}
}
