package httplimit_test

import (
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// A rule keyed by a {rest...} wildcard is one count per resource, however
// its path is spelled: Express (not strict), Rails, Laravel and ASP.NET
// Core serve /files/a/b/ as /files/a/b (the package's reading 3, which
// the "path" key and a {name} wildcard's value follow), so the value
// drops a trailing slash, after its segments' parameters ("a/b/;x" is
// "a/b" too): a client appending "/" gets no fresh quota of the file.
func TestARestWildcardKeyIgnoresATrailingSlash(t *testing.T) {
	mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "files", Paths: []string{"/files/{name...}"},
		Key: []string{"path:name"}, Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}})
	got := statuses(mw,
		req{path: "/files/a/b", remote: "192.0.2.1:1"},
		req{path: "/files/a/b/", remote: "192.0.2.2:1"},
		req{path: "/files/a/b/;x", remote: "192.0.2.3:1"},
		req{path: "/files/a/", remote: "192.0.2.4:1"},
		req{path: "/files/a", remote: "192.0.2.5:1"},
	)
	if want := []int{200, 429, 429, 200, 429}; !slices.Equal(got, want) {
		t.Errorf("a/b, then a/b/ and a/b/;x, then a/ and a: %v, want %v", got, want)
	}

	// The single-segment wildcard reads it so too.
	mw, _ = rulesMiddleware(t, httplimit.Rule{Name: "files", Paths: []string{"/files/{name}"},
		Key: []string{"path:name"}, Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}})
	got = statuses(mw,
		req{path: "/files/a", remote: "192.0.2.1:1"},
		req{path: "/files/a/", remote: "192.0.2.2:1"},
	)
	if want := []int{200, 429}; !slices.Equal(got, want) {
		t.Errorf("{name}: /files/a, then /files/a/: %v, want %v", got, want)
	}
}
