package routes

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
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

// MaxWildcards is the most wildcards a path pattern of a rule holds
// (CheckPath).
const MaxWildcards = 8

// CheckPath returns nil when s is a path pattern a rule takes (httplimit's
// Match.Paths, a route's path in the configuration), and otherwise an
// error saying why it is not one, in the terms of ServeMux's syntax. It is
// stricter than ServeMux: the path starts with "/" and has no space, tab,
// glob segment (GlobError) or empty segment before the last; a "{" or "}"
// stands only in a wildcard that is a whole segment ({name}, {name...}
// last, {$} last), so "/a}b", a literal to ServeMux, is refused; the
// wildcards have distinct Go identifiers for names, at most MaxWildcards.
func CheckPath(s string) error {
	if !strings.HasPrefix(s, "/") {
		return errors.New(`a path pattern starts with "/" (methods and hosts have fields of their own)`)
	}
	if strings.ContainsAny(s, " \t") {
		return errors.New("a path pattern has no spaces or tabs (ServeMux reads them as separating a method from the path)")
	}
	if err := GlobError(s); err != nil {
		return err
	}
	parts := strings.Split(s[1:], "/")
	seen := map[string]bool{}
	for i, part := range parts {
		last := i == len(parts)-1
		if !strings.ContainsAny(part, "{}") {
			if part == "" && !last {
				// ServeMux matches any segment there; a path is cleaned
				// before matching, so no path has an empty one.
				return errors.New(`a path pattern has no empty segment ("//")`)
			}
			continue
		}
		if !strings.HasPrefix(part, "{") || !strings.HasSuffix(part, "}") || strings.Count(part, "{") != 1 || strings.Count(part, "}") != 1 {
			return fmt.Errorf("segment %q: a wildcard is a whole segment, {name}", part)
		}
		name := part[1 : len(part)-1]
		if name == "$" {
			if !last {
				return errors.New("{$} ends a pattern")
			}
			continue
		}
		if n, ok := strings.CutSuffix(name, "..."); ok {
			if !last {
				return fmt.Errorf("{%s} must end the pattern", name)
			}
			name = n
		}
		if !isIdentifier(name) {
			return fmt.Errorf("wildcard %q is not a Go identifier", name)
		}
		if seen[name] {
			return fmt.Errorf("wildcard %q twice", name)
		}
		seen[name] = true
	}
	if len(seen) > MaxWildcards {
		return fmt.Errorf("%d wildcards, at most %d", len(seen), MaxWildcards)
	}
	return nil
}

// isIdentifier reports whether s is a Go identifier of ASCII letters,
// digits and '_'.
func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// Normal returns the requests the valid ServeMux pattern s matches, as a
// string equal for two patterns exactly when they match the same requests:
// its method, host (in lower case, without the root dot, as a Mux matches
// it) and path segments, each literal segment unescaped as ServeMux reads
// it and each wildcard without its name ("GET /x/{a}" and "GET /x/{b}" are
// one, "GET /a%62" and "GET /ab" too), and a trailing slash written as the
// {name...} wildcard ServeMux reads it as ("GET /x/" is "GET
// /x/{rest...}", "/" is "/{p...}").
func Normal(s string) string {
	s = LowerHost(s)
	i, j := HostSpan(s)
	var b strings.Builder
	b.WriteString(strings.TrimRight(s[:i], " \t") + " " + s[i:j])
	segs := strings.Split(s[j:], "/")[1:]
	for k, seg := range segs {
		b.WriteByte('/')
		switch {
		case seg == "{$}":
			b.WriteString("{$}")
		case seg == "" && k == len(segs)-1, strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "...}"):
			b.WriteString("{...}")
		case strings.HasPrefix(seg, "{"):
			b.WriteString("{}")
		default:
			if u, err := url.PathUnescape(seg); err == nil {
				seg = u
			}
			b.WriteString(url.PathEscape(seg))
		}
	}
	return b.String()
}
