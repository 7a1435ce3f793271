// Package routes matches HTTP requests to net/http ServeMux patterns
// ("[METHOD ][HOST]/PATH") as sluice matches its routes: exemptions, costs
// and degradation classes. Matching follows ServeMux's rules (method, host,
// wildcards, the most specific pattern wins), but for hosts, which are
// matched in any case and without the root dot ("API.example.com." is
// api.example.com), where ServeMux compares them byte for byte.
//
// A path with escapes has two readings: ServeMux's, segment by segment of
// the escaped path ("/api%2Fgenerate" is one segment), and that of an
// upstream that decodes before it routes ("/api/generate"). Decoded
// returns the second, so that a caller can require both readings to match
// (an exemption) or either (an endpoint to shed).
package routes

import (
	"fmt"
	"net/http"
	"path"
	"strings"
)

// Mux is a set of ServeMux patterns. The zero Mux matches nothing; Handle
// must not be called concurrently with itself or Pattern, and Pattern is
// safe for concurrent use.
type Mux struct {
	mux *http.ServeMux
	// hosts: some pattern names a host, so a request's host is matched in
	// lower case and without the root dot.
	hosts bool
	// registered holds each pattern as registered: its host in lower case,
	// without the root dot.
	registered map[string]bool
	// configured maps a pattern as registered to the pattern as first
	// handed to Handle, where the two differ.
	configured map[string]string
	// root is the pattern, as first handed to Handle, that matches every
	// request ("/" or "/{name...}", without method or host), or "" for
	// none. mux and lower register "/" in either case, so that every
	// request matches some pattern: a request that matches none makes
	// ServeMux work out which methods would have matched (for a 405 it
	// never sends here), six allocations per request. "/" stands for root,
	// or for no pattern while root is "".
	root string
	// lower holds the patterns with their paths' literals in lower case,
	// once some pattern has an upper-case letter, written or escaped
	// ("%41"), in a literal of its path (nil: mux serves for them), for the
	// spellings in lower case (see Spellings):
	// each in the first of its ServeMuxes that takes it beside the patterns
	// there, so that patterns ServeMux cannot hold together in lower case
	// are in different ones (see addLower). lowerOf maps each pattern
	// lower holds to what it stands for (see lowered), and lowerAt maps
	// each route (see Normal) to the pattern lower holds for it.
	lower   []lowerMux
	lowerOf map[string]*lowered
	lowerAt map[string]string
	// parts holds what the patterns write, for Covering.
	parts parts
}

// Handle adds pattern. It returns an error for a pattern that ServeMux
// refuses, alone or beside one added before; a pattern that is one added
// before once its host is in lower case names the same routes and is not
// added again. "/" and "/{name...}" match every request alike: either may
// be added, not both.
func (m *Mux) Handle(pattern string) error {
	lp := LowerHost(pattern)
	if m.registered[lp] {
		return nil
	}
	if m.mux == nil {
		m.mux, m.registered = http.NewServeMux(), map[string]bool{}
		m.mux.Handle("/", http.NotFoundHandler())
	}
	if matchesEverything(lp) {
		if m.root != "" {
			return fmt.Errorf("pattern %q conflicts with pattern %q: %s matches the same requests as %s", pattern, m.root, pattern, m.root)
		}
		m.root, m.registered[lp] = pattern, true
		m.parts.add(lp)
		return nil
	}
	if err := handle(m.mux, lp); err != nil {
		return err
	}
	if i, j := HostSpan(lp); j > i {
		m.hosts = true
	}
	if lp != pattern {
		if m.configured == nil {
			m.configured = map[string]string{}
		}
		m.configured[lp] = pattern
	}
	m.registered[lp] = true
	m.handleLower(lp)
	m.parts.add(lp)
	return nil
}

// matchesEverything reports whether the pattern p, as registered, matches
// every request: it has no method or host, and its path is "/" or
// "/{name...}" (one route, see Normal).
func matchesEverything(p string) bool {
	if p == "/" {
		return true
	}
	if !strings.HasPrefix(p, "/{") || strings.Count(p, "/") != 1 {
		return false
	}
	return handle(http.NewServeMux(), p) == nil && Normal(p) == Normal("/")
}

// hostMatched returns r, or a copy whose Host is as the patterns name
// hosts (see MatchedHost) when m has patterns with hosts.
func (m *Mux) hostMatched(r *http.Request) *http.Request {
	if m.hosts {
		if h := MatchedHost(r.Host); h != r.Host {
			r2 := *r
			r2.Host = h
			return &r2
		}
	}
	return r
}

// Pattern returns the pattern r matches under ServeMux's reading of its
// path, as it was first handed to Handle, or "" when it matches none.
func (m *Mux) Pattern(r *http.Request) string {
	if m == nil || m.mux == nil {
		return ""
	}
	_, p := m.mux.Handler(m.hostMatched(r))
	if p == "/" {
		return m.root
	}
	return m.asConfigured(p)
}

// MatchesAll reports whether r matches a pattern under both readings of
// its path (see Decoded): what may exempt a request, so that no spelling
// of a path gains an exemption its other reading lacks.
func (m *Mux) MatchesAll(r *http.Request) bool {
	if m.Pattern(r) == "" {
		return false
	}
	d := Decoded(r)
	return d == nil || m.Pattern(d) != ""
}

// handle adds pattern p to mux, returning ServeMux's refusal of it as an
// error.
func handle(mux *http.ServeMux, p string) (err error) {
	defer func() { // ServeMux panics on invalid or conflicting patterns
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	mux.Handle(p, http.NotFoundHandler())
	return nil
}

// Decoded returns a copy of r whose path is r's decoded and cleaned (see
// CleanPath), as an upstream that decodes before it routes reads it; nil
// when r's path has no escapes (url.URL.RawPath is set only then), so that
// both readings are one.
func Decoded(r *http.Request) *http.Request {
	if r.URL == nil || r.URL.RawPath == "" {
		return nil
	}
	u := *r.URL
	u.Path, u.RawPath = CleanPath(u.Path), ""
	r2 := *r
	r2.URL = &u
	return &r2
}

// HostSpan returns where the host of the ServeMux pattern p is, p[i:j];
// i == j when it has none.
func HostSpan(p string) (i, j int) {
	i = strings.IndexAny(p, " \t") + 1 // after the method and its blanks, if any
	for i < len(p) && (p[i] == ' ' || p[i] == '\t') {
		i++
	}
	j = strings.IndexByte(p[i:], '/')
	if j < 0 {
		return i, i
	}
	return i, i + j
}

// LowerHost returns the ServeMux pattern p with its host, if it has one,
// in lower case and without the root dot.
func LowerHost(p string) string {
	i, j := HostSpan(p)
	if i == j {
		return p
	}
	host := strings.ToLower(p[i:j])
	for len(host) > 1 && host[len(host)-1] == '.' {
		host = host[:len(host)-1]
	}
	return p[:i] + host + p[j:]
}

// MatchedHost returns the request host h (with its port, if any) as a Mux
// matches it: its name in lower case, without the root dot or dots
// ("API.example.com..:8443" is api.example.com:8443), the port kept, which
// ServeMux drops. It is h itself when h is so already, as most hosts are.
// A ServeMux that reads a request with this host matches a pattern whose
// host LowerHost wrote as a Mux does.
func MatchedHost(h string) string {
	name, port := h, ""
	if i := strings.LastIndexByte(h, ':'); i >= 0 && !strings.HasSuffix(h, "]") {
		name, port = h[:i], h[i:]
	}
	if !strings.HasSuffix(name, ".") && !strings.ContainsFunc(name, func(c rune) bool { return 'A' <= c && c <= 'Z' }) {
		return h
	}
	name = strings.ToLower(name)
	for len(name) > 1 && name[len(name)-1] == '.' {
		name = name[:len(name)-1]
	}
	return name + port
}

// CleanPath returns p as ServeMux routes it: rooted, without empty, "."
// and ".." segments (RFC 3986 §5.2.4), a trailing slash kept. It
// allocates only for a path that needs cleaning.
func CleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if isClean(p) {
		return p
	}
	np := path.Clean("/" + p)
	if strings.HasSuffix(p, "/") && np != "/" {
		np += "/"
	}
	return np
}

// isClean reports whether p is rooted and has no empty, "." or ".."
// segment but a last empty one (a trailing slash).
func isClean(p string) bool {
	if p[0] != '/' {
		return false
	}
	for i := 0; i >= 0; {
		seg := p[i+1:] // from the byte after a slash
		switch {
		case seg == "":
			return true
		case seg[0] == '/':
			return false
		case seg[0] == '.':
			if len(seg) == 1 || seg[1] == '/' || seg[1] == '.' && (len(seg) == 2 || seg[2] == '/') {
				return false
			}
		}
		if j := strings.IndexByte(seg, '/'); j >= 0 {
			i += 1 + j
		} else {
			i = -1
		}
	}
	return true
}
