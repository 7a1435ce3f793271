package server

import (
	"net/url"
	"strings"

	"github.com/sluice-dev/sluice/internal/routes"
)

// resolveDotSegments returns the escaped path p with its dot segments
// resolved, and whether it had any. A dot segment is one whose unescaped
// form is "." or ".." ("%2e%2e", ".%2E"), bounded by "/" or by an escaped
// slash ("%2F", "%2f"): p has one exactly when its decoded path has a "."
// or ".." segment. An escaped slash that bounds a dot segment separates, as
// decoding makes it ("..%2Fb" is "../b"); every other escape, an escaped
// slash between two other segments included ("group%2Fproject"), is kept
// as written, for only unreserved escapes may be decoded in normalizing a
// path (RFC 3986 §6.2.2.2). The result is clean as ServeMux cleans a path
// (cleanMuxPath: rooted, no empty, "." or ".." segment, a trailing slash
// kept) and has no dot segment, escaped or not: requested, it is not
// redirected again.
func resolveDotSegments(p string) (string, bool) {
	if !strings.Contains(p, ".") && !strings.Contains(p, "%2e") && !strings.Contains(p, "%2E") {
		return p, false // no dot, escaped or not: no dot segment
	}
	// The pieces of p between its separators, "/" or an escaped slash.
	type piece struct {
		text string // as written
		sep  string // the separator written after it, "" for the last
		dot  string // its unescaped form when that is "." or "..", else ""
	}
	var pieces []piece
	found := false
	for start, i := 0, 0; ; {
		sepLen := 0
		switch {
		case i == len(p):
		case p[i] == '/':
			sepLen = 1
		case p[i] == '%' && i+2 < len(p) && p[i+1] == '2' && (p[i+2] == 'F' || p[i+2] == 'f'):
			sepLen = 3
		default:
			i++
			continue
		}
		pc := piece{text: p[start:i], sep: p[i : i+sepLen]}
		if pc.dot = dotForm(pc.text); pc.dot != "" {
			found = true
		}
		pieces = append(pieces, pc)
		if i == len(p) {
			break
		}
		i += sepLen
		start = i
	}
	if !found {
		return p, false
	}
	var b strings.Builder
	b.Grow(len(p))
	for i, pc := range pieces {
		if pc.dot != "" {
			b.WriteString(pc.dot)
		} else {
			b.WriteString(pc.text)
		}
		if pc.sep != "/" && pc.sep != "" && (pc.dot != "" || pieces[i+1].dot != "") {
			b.WriteByte('/') // an escaped slash bounding a dot segment
		} else {
			b.WriteString(pc.sep)
		}
	}
	// Every dot segment now stands between slashes, as "." or "..", which
	// cleanMuxPath resolves; the other segments it leaves as written.
	return cleanMuxPath(b.String()), true
}

// dotForm returns the unescaped form of the escaped segment seg when that
// is "." or "..", else "".
func dotForm(seg string) string {
	if seg == "" || len(seg) > len("%2e%2e") || strings.Trim(seg, ".%2eE") != "" {
		return ""
	}
	if u, err := url.PathUnescape(seg); err == nil && (u == "." || u == "..") {
		return u
	}
	return ""
}

// judgedPath returns the escaped path p with its dot segments resolved,
// encoded ones too, and its other escapes kept (resolveDotSegments): the
// path whose two readings the middleware weighs, decoded ("/files/a/b",
// as nginx's $uri and Caddy's and Traefik's path matchers read it) and
// escaped ("/files/a%2Fb", which ServeMux serves as one segment, a/b), as
// the reverse proxy weighs those of a request it redirected there. It
// returns false when the decoded reading of the resolved path is not p
// decoded and resolved: a ".." after a segment with an escaped slash,
// which removes the whole segment as ServeMux reads it and a part of it
// decoded ("/a%2Fb/../c" is "/c" and "/a/c"), so that p has three
// readings, and the middleware weighs two.
func judgedPath(p string) (string, bool) {
	resolved, ok := resolveDotSegments(p)
	if !ok {
		return p, true // no dot segment: one path, however read
	}
	decoded, err := url.PathUnescape(p)
	if err != nil {
		return p, false
	}
	d, err := url.PathUnescape(resolved)
	if err != nil || routes.CleanPath(d) != routes.CleanPath(decoded) {
		return p, false
	}
	return resolved, true
}

// judgedReadings sets u's path to the two readings of judgedPath, cleaned
// as ServeMux cleans a path: u.RawPath escaped, when it has escapes that
// decoding would lose, and u.Path decoded. It returns false, u unchanged,
// when judgedPath does.
func judgedReadings(u *url.URL) bool {
	esc, ok := judgedPath(u.EscapedPath())
	if !ok {
		return false
	}
	esc = cleanMuxPath(esc)
	p, err := url.PathUnescape(esc)
	if err != nil {
		return false
	}
	u.Path, u.RawPath = p, ""
	if u.EscapedPath() != esc {
		u.RawPath = esc
	}
	return true
}
