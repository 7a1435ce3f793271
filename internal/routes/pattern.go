package routes

import (
	"fmt"
	"net/http"
	"strings"
)

// Check returns nil when s is a pattern a ServeMux takes, and otherwise an
// error quoting s and saying why it is not one: no method token before the
// space (`GE(T /x`), a wildcard that is not a whole segment (`/x/{id`) or
// no Go identifier (`{a-b}`), a wildcard named twice, {name...} or {$}
// before the last segment. It judges s alone; two patterns one ServeMux
// cannot hold together are Handle's to refuse.
func Check(s string) error {
	if err := handle(http.NewServeMux(), s); err != nil {
		return fmt.Errorf("%q is not a ServeMux pattern (e.g. \"POST /api/generate\", \"GET /items/{id}\"): %v", s, err)
	}
	return nil
}

// GlobError reports a segment of the path of a ServeMux pattern written as
// a glob of nginx, Express or a shell ("/static/*", "/files/*.png"):
// ServeMux reads "*" as itself, so such a pattern matches only a path with
// that very segment, which is never what it meant. It returns nil for a
// path without one.
func GlobError(path string) error {
	parts := strings.Split(path, "/")
	for i, part := range parts {
		if strings.Contains(part, "*") {
			return fmt.Errorf("segment %q is no wildcard: ServeMux matches it as it is written, so it matches only "+
				"the path with that segment (the subtree is %q, one segment {name}, the rest {name...})",
				part, strings.Join(parts[:i], "/")+"/")
		}
	}
	return nil
}
