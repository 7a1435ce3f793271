package server_test

import (
	"strings"
	"testing"
)

// A body over an endpoint's bound is a 413, whatever it holds past the
// bound: one JSON value followed by whitespace is no second value.
func TestABodyOverItsBoundIs413EvenWhenItsValueEndsWithin(t *testing.T) {
	f := newFixture(t, testConfig)
	for _, c := range []struct {
		path, value string
		bound       int
	}{
		{"/v1/check", `{"subject":"s"}`, 64 << 10},
		{"/v1/settle", `{"id":"x"}`, 64 << 10},
		{"/v1/tokens", `{"token":"x"}`, 16 << 10},
		{"/designer/import", `{"format":"nginx","source":""}`, 1 << 20},
	} {
		for _, tail := range []string{"", "x"} {
			body := c.value + strings.Repeat(" ", c.bound) + tail
			r := f.do(t, "POST", c.path, body, nil)
			if got := readAll(t, r); r.StatusCode != 413 {
				t.Errorf("%s: a %d-byte value and whitespace past %d bytes%s: %d %s, want 413", c.path, len(c.value), c.bound,
					map[string]string{"": "", "x": " (and more)"}[tail], r.StatusCode, got)
			}
		}
	}
}
