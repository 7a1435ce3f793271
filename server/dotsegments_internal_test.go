package server

import (
	"net/url"
	"strings"
	"testing"
)

func TestResolveDotSegments(t *testing.T) {
	for _, c := range []struct {
		in, want string
		found    bool
	}{
		{"/a/b%2Fc", "/a/b%2Fc", false},
		{"/a/%2efile/..x/.%2e.", "/a/%2efile/..x/.%2e.", false},
		{"/a/%2e%2e", "/", true},
		{"/a/%2e%2e/", "/", true},
		{"/a/%2e/", "/a/", true},
		{"/a/b/%2E", "/a/b", true},
		{"/a/.%2e/b%3Bc", "/b%3Bc", true},
		{"/a/..%2Fb%2Fc", "/b%2Fc", true},
		{"/a/b%2f..%2f%2e%2e%2fc", "/c", true},
		{"/a/b%2F%2e", "/a/b", true},
		{"/a%2Fb/%2e%2e/c", "/c", true},
		{"/%2e%2e%2F%2Fx", "/%2Fx", true},
		{"/%2e%2e//x", "/x", true},
	} {
		got, found := resolveDotSegments(c.in)
		if got != c.want || found != c.found {
			t.Errorf("resolveDotSegments(%q) = %q, %v; want %q, %v", c.in, got, found, c.want, c.found)
		}
	}
}

// FuzzResolveDotSegments: a request path has an escaped dot segment
// exactly when its decoded path has a "." or ".." segment, and its
// resolution is clean: no dot segment, escaped or not, nothing ServeMux
// would clean, no "//" that would name another host.
func FuzzResolveDotSegments(f *testing.F) {
	for _, s := range []string{"/", "/a/%2e%2e/b%2Fc", "/..%2F%2Fx", "/a%2F.%2F..", "/%2E./%2e", "/a/./b//"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, target string) {
		u, err := url.ParseRequestURI(target)
		if err != nil || u.Opaque != "" || u.Host != "" || !strings.HasPrefix(u.Path, "/") {
			return
		}
		p := u.EscapedPath()
		got, found := resolveDotSegments(p)
		if found != decodedDotSegment(u.Path) {
			t.Fatalf("resolveDotSegments(%q) found %v, but the decoded path is %q", p, found, u.Path)
		}
		if !found {
			if got != p {
				t.Fatalf("resolveDotSegments(%q) = %q, want it as it is", p, got)
			}
			return
		}
		v, err := url.ParseRequestURI(got)
		if err != nil {
			t.Fatalf("resolveDotSegments(%q) = %q: %v", p, got, err)
		}
		if again, more := resolveDotSegments(got); more || again != got || cleanMuxPath(got) != got ||
			strings.HasPrefix(got, "//") || v.EscapedPath() != got || decodedDotSegment(v.Path) {
			t.Fatalf("resolveDotSegments(%q) = %q, not clean", p, got)
		}
	})
}

func decodedDotSegment(p string) bool {
	for seg := range strings.SplitSeq(p, "/") {
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}
