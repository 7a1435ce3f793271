package routes

import (
	"path"
	"strings"
	"testing"
)

func TestCleanPath(t *testing.T) {
	for in, want := range map[string]string{"": "/", "/a/b": "/a/b", "//a/./b/": "/a/b/", "/a/../b": "/b", "a": "/a", "/a/..": "/",
		"/.": "/", "/..": "/", "/a/.": "/a", "/a//": "/a/", "/.well-known/x": "/.well-known/x", "/a/..b/...": "/a/..b/..."} {
		if got := CleanPath(in); got != want {
			t.Errorf("CleanPath(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzCleanPath: CleanPath is path.Clean of the rooted path, with a
// trailing slash kept, as ServeMux cleans a request's path.
func FuzzCleanPath(f *testing.F) {
	for _, s := range []string{"", "/", "/a/b/", "//a", "/./a", "/a/../b", "/a/.", "/a/..", "/.b/..c/...", "a/b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		want := path.Clean("/" + p)
		if strings.HasSuffix(p, "/") && want != "/" {
			want += "/"
		}
		if got := CleanPath(p); got != want {
			t.Fatalf("CleanPath(%q) = %q, want %q", p, got, want)
		}
	})
}
