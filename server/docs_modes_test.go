package server_test

import (
	"strings"
	"testing"
)

// /docs's advice on backing off names the fields of the header mode the
// API sends: a client told to watch RateLimit's r and t under draft-6 or
// legacy headers watches fields that never come.
func TestDocsBackoffNamesTheHeadersSent(t *testing.T) {
	for _, c := range []struct {
		modes      string
		want, dont []string
	}{
		{"[ietf]", []string{"<code>RateLimit</code>: when <code>r</code> of a limit reaches 0, pause for its <code>t</code> seconds"}, nil},
		{"[draft-7]", []string{"<code>RateLimit</code>: when its <code>remaining</code> reaches 0, pause for its <code>reset</code> seconds"},
			[]string{"<code>r</code> of a limit"}},
		{"[draft-6]", []string{"<code>RateLimit-Remaining</code>: when it reaches 0, pause for <code>RateLimit-Reset</code> seconds"},
			[]string{"<code>r</code> of a limit", "<code>RateLimit</code>:"}},
		{"[legacy]", []string{"<code>X-RateLimit-Remaining</code>: when it reaches 0, pause until <code>X-RateLimit-Reset</code> (a Unix time, in seconds)"},
			[]string{"<code>r</code> of a limit", "<code>RateLimit</code>:"}},
		{"[legacy, ietf]", []string{"<code>RateLimit</code>: when <code>r</code> of a limit reaches 0"}, nil},
	} {
		f := newFixture(t, testConfig+"  headers: "+c.modes+"\n")
		page := readAll(t, f.do(t, "GET", "/docs", "", nil))
		start, end := strings.Index(page, `<h2 id="backoff">`), strings.Index(page, `<h3 id="code-curl-h">`)
		if start < 0 || end < start {
			t.Fatalf("%s: no backoff section", c.modes)
		}
		advice := page[start:end]
		for _, w := range c.want {
			if !strings.Contains(advice, w) {
				t.Errorf("headers %s: the advice lacks %q:\n%s", c.modes, w, advice)
			}
		}
		for _, d := range c.dont {
			if strings.Contains(advice, d) {
				t.Errorf("headers %s: the advice names %q, a field the API does not send:\n%s", c.modes, d, advice)
			}
		}
	}
}

// /docs's word on retry_jitter names the field the jitter delays in the
// header mode sent: the t of the IETF fields is no field of the others.
func TestDocsJitterNamesTheResetSent(t *testing.T) {
	for modes, want := range map[string]string{
		"[ietf]":    "(and the <code>t</code> of a limit you have used up)",
		"[draft-7]": "(and the <code>reset</code> of <code>RateLimit</code> once you have used it up)",
		"[draft-6]": "(and <code>RateLimit-Reset</code> once you have used it up)",
		"[legacy]":  "(and <code>X-RateLimit-Reset</code> once you have used it up)",
	} {
		f := newFixture(t, testConfig+"  headers: "+modes+"\n  retry_jitter: 5s\n")
		page := readAll(t, f.do(t, "GET", "/docs", "", nil))
		start, end := strings.Index(page, `<h2 id="refused">`), strings.Index(page, `<h2 id="backoff">`)
		if start < 0 || end < start {
			t.Fatalf("%s: no refusal section", modes)
		}
		if said := page[start:end]; !strings.Contains(said, want) {
			t.Errorf("headers %s: the refusal section lacks %q:\n%s", modes, want, said)
		}
	}
}
