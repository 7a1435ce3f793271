package httplimit

import "strings"

// boundariesAgree reports whether PHP and Rack read the same boundary of a
// multipart/form-data body of Content-Type ct as Go does, params being
// Go's parameters of ct (see mediaTypeParams): the same value, or none for
// all three. Where they differ the parts an upstream reads are not the
// ones Go's boundary delimits, or there are parts where Go reads none.
func boundariesAgree(ct string, params map[string]string) bool {
	goB, goOK := params["boundary"]
	phpB, phpOK := phpBoundary(ct)
	rackB, rackOK := rackBoundary(ct)
	return phpOK == goOK && rackOK == goOK && phpB == goB && rackB == goB
}

// phpBoundary returns the boundary PHP's multipart reader (main/rfc1867.c)
// reads of Content-Type ct, or ok false for none: after the first '=' that
// follows the first "boundary" anywhere in ct (as sent, else in any case:
// within another parameter's name or value too), up to the next quote when
// it opens with one (none without a closing quote), else up to a ',' or
// ';', spaces kept.
func phpBoundary(ct string) (b string, ok bool) {
	i := strings.Index(ct, "boundary")
	if i < 0 {
		i = indexASCIIFold(ct, "boundary")
	}
	if i < 0 {
		return "", false
	}
	_, b, ok = strings.Cut(ct[i:], "=")
	if !ok {
		return "", false
	}
	if rest, quoted := strings.CutPrefix(b, `"`); quoted {
		b, _, ok = strings.Cut(rest, `"`)
		return b, ok
	}
	if k := strings.IndexAny(b, ",;"); k >= 0 {
		b = b[:k]
	}
	return b, true
}

// rackBoundary returns the boundary Rack's multipart parser reads of
// Content-Type ct, or ok false for none: the match of
// \Amultipart/.*boundary=\"?([^\";,]+)\"? in any case, whose greedy .*
// takes the last "boundary=" in ct (within another parameter's name or
// value too) that is followed by at least one byte of the value.
func rackBoundary(ct string) (b string, ok bool) {
	const prefix, name = "multipart/", "boundary="
	if len(ct) < len(prefix) || !equalASCIIFold(ct[:len(prefix)], prefix) {
		return "", false
	}
	for end := len(ct); ; {
		i := lastIndexASCIIFold(ct[len(prefix):end], name)
		if i < 0 {
			return "", false
		}
		i += len(prefix)
		v := strings.TrimPrefix(ct[i+len(name):], `"`)
		if k := strings.IndexAny(v, `";,`); k >= 0 {
			v = v[:k]
		}
		if v != "" {
			return v, true
		}
		end = i // "boundary=" does not overlap itself
	}
}

// indexASCIIFold returns the index of the first sub, in lower case, in s
// in any ASCII case, or -1.
func indexASCIIFold(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if equalASCIIFold(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}

// lastIndexASCIIFold returns the index of the last sub, in lower case, in
// s in any ASCII case, or -1.
func lastIndexASCIIFold(s, sub string) int {
	for i := len(s) - len(sub); i >= 0; i-- {
		if equalASCIIFold(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}

// equalASCIIFold reports whether s is lower, of the same length, in any
// ASCII case.
func equalASCIIFold(s, lower string) bool {
	for i := range len(lower) {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}
