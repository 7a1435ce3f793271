package main

import (
	"strings"
	"testing"
)

// A -X method or a -H header that no HTTP request can carry is a command
// line bench cannot read: a usage error (status 2) naming the flag,
// before any request is sent, as a bad -c, -d or URL is, rather than a
// whole -d of requests that each fail at once. A header's name and value
// are never printed: a header given wrong is often a credential.
func TestBenchRefusesAMethodOrHeaderNoRequestCarries(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		flag string
	}{
		{"a method with a space", []string{"-X", "BAD METHOD"}, "-X"},
		{"a method with a newline", []string{"-X", "GET\n"}, "-X"},
		{"a header name with a space", []string{"-H", "Bad Name: sluice-secret-1"}, "-H"},
		{"a header name with a brace", []string{"-H", "X-{key}: sluice-secret-1"}, "-H"},
		{"a header value with a newline", []string{"-H", "Authorization: Bearer sluice-secret-1\r\nX-Forged: 1"}, "-H"},
		{"a header value with a NUL", []string{"-H", "Authorization: sluice-secret-1\x00"}, "-H"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"bench", "-d", "300ms"}, tc.args...), "http://127.0.0.1:1/")
			code, out, errOut := runSluice(t, args...)
			if code != 2 || !strings.Contains(errOut, tc.flag) || out != "" {
				t.Errorf("bench %q: exit %d, stdout %q; want 2, nothing sent, and a message naming %s; stderr:\n%s", tc.args, code, out, tc.flag, errOut)
			}
			if strings.Contains(errOut, "sluice-secret-1") {
				t.Errorf("bench %q: the header's value is printed:\n%s", tc.args, errOut)
			}
		})
	}
}

// What a request carries is still taken: a method of any token (PURGE,
// a WebDAV one), a header whose value holds {key}, spaces or a tab.
func TestBenchTakesEveryMethodAndHeaderARequestCarries(t *testing.T) {
	for _, args := range [][]string{
		{"-X", "PURGE"},
		{"-X", "PROPFIND", "-H", "Depth: 1"},
		{"-H", "X-Api-Key: {key}"},
		{"-H", "X-Note: two words\tand a tab"},
	} {
		o := benchOptions{url: "http://127.0.0.1:1/", method: "GET", conns: 1, duration: 1, keys: 1}
		for i := 0; i < len(args); i += 2 {
			switch args[i] {
			case "-X":
				o.method = args[i+1]
			case "-H":
				o.headers = append(o.headers, args[i+1])
			}
		}
		if err := o.validate(); err != nil {
			t.Errorf("bench %q: %v", args, err)
		}
	}
}
