package httplimit

import (
	"net/http"
	"net/textproto"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sluice-dev/sluice/internal/phpname"
	"github.com/sluice-dev/sluice/internal/querypair"
)

// queryValue returns the first value of the query parameter name in the
// raw query, decoded as url.ParseQuery would give it and without the
// whitespace around it (see trimValue); "" when absent. The parameter is
// found by its name in any case and as PHP names it (see
// querypair.SameName), as formValue finds a field. It splits on "&" (see
// querypair.Values), however many pairs, and allocates only to decode a
// pair that has escapes. A parameter given more than once with values
// that differ is ambiguous: upstreams read different ones (Go the first,
// Django and Rails the last). So is a pair url.ParseQuery refuses that
// another upstream may read as the parameter (see querypair:
// "tenant=acme;v=1" is tenant acme to Rack 2), as formValue takes one: Go
// reads none of its value. The query is read up to a "#" (see
// queryValues).
func queryValue(raw, name string) (first string, ambiguous bool) {
	found := false
	read := queryValues(raw, name, func(v string) {
		switch v = trimValue(v); {
		case !found:
			first, found = v, true
		case v != first:
			ambiguous = true
		}
	})
	return first, ambiguous || !read
}

// queryValues calls add with the value of each pair of the raw query that
// carries name, as querypair.Values does, of the query up to a "#": a "#"
// ends the query, as nginx ($args), PHP, Express, Puma and gunicorn read
// the target of a client that sent one, though Go's server keeps it in the
// query, so "tenant=acme#1" is tenant acme. It returns false where
// querypair.Values does, and when a pair past the "#" and an "&", which Go
// alone reads, carries name or may (as querypair.Values reads one). It
// keeps no reference to add, and allocates only to decode a pair that has
// escapes.
func queryValues(raw, name string, add func(v string)) bool {
	raw, fragment, _ := strings.Cut(raw, "#")
	if !querypair.Values(raw, name, add) {
		return false
	}
	_, goOnly, _ := strings.Cut(fragment, "&")
	goNamed := false
	return querypair.Values(goOnly, name, func(string) { goNamed = true }) && !goNamed
}

// cookieValue returns the value of the first cookie named name of the
// Cookie header lines of h, without the whitespace around it (inside
// quotes too), without the quotes Go's and Python's readers drop and
// with its escapes decoded (see cookieDecoded); "" when there is none. A
// cookie is found by its name in any case, as ASP.NET Core's
// Request.Cookies finds one, and as PHP's $_COOKIE names one (see
// querypair.SameName). Cookies of the name with values that differ are
// ambiguous: upstreams read different ones (Go and PHP the first, Django
// the last); so is a value whose escapes upstreams decode differently. It
// allocates only to decode a value with escapes.
func cookieValue(h http.Header, name string) (first string, ambiguous bool) {
	pn := phpname.Of(name)
	found := false
	for _, line := range h["Cookie"] {
		for line != "" {
			var part string
			part, line, _ = strings.Cut(line, ";")
			k, v, _ := strings.Cut(part, "=")
			if !querypair.SameName(textproto.TrimString(k), name, pn) {
				continue
			}
			v = trimValue(v)
			if len(v) > 1 && v[0] == '"' && v[len(v)-1] == '"' {
				v = trimValue(v[1 : len(v)-1])
			}
			if v, ambiguous = cookieDecoded(v); ambiguous {
				return first, true
			}
			switch {
			case !found:
				first, found = v, true
			case v != first:
				return first, true
			}
		}
	}
	return first, false
}

// cookieDecoded returns the cookie value v as the upstreams that decode a
// cookie's value read it, without the whitespace around it (see
// trimValue): Express (the cookie package: decodeURIComponent; v as it is
// when that fails), Rack (Utils.unescape; v as it is when an escape does
// not decode) and PHP ($_COOKIE: rawurldecode; an escape that does not
// decode kept as it is). So "abc", "%61bc" and "a%62%63" are one value,
// which Go and Django, reading v as sent, take for another: counted with
// it, not apart. A value without a '%' is v as it is; a '+' is kept, as
// Express and PHP keep it (Rack reads a space, in a value without escapes
// too). A value is ambiguous when they decode its escapes differently:
// some escape does not decode and another does (PHP decodes that one,
// Express and Rack neither), or the bytes of a run of escapes are no
// UTF-8 (Express keeps v, PHP and Rack decode it). It allocates only when
// v has an escape that decodes.
func cookieDecoded(v string) (string, bool) {
	if strings.IndexByte(v, '%') < 0 {
		return v, false
	}
	decodes, fails := false, false
	for i := 0; i < len(v); i++ {
		if v[i] != '%' {
			continue
		}
		if i+2 < len(v) && isHexDigit(v[i+1]) && isHexDigit(v[i+2]) {
			decodes, i = true, i+2
		} else {
			fails = true
		}
	}
	switch {
	case fails && decodes:
		return "", true
	case fails: // every reader keeps v as it is
		return v, false
	}
	b := make([]byte, 0, len(v))
	run := -1 // the start in b of the run of escapes being decoded
	for i := 0; i < len(v); i++ {
		if v[i] == '%' {
			if run < 0 {
				run = len(b)
			}
			b = append(b, hexValue(v[i+1])<<4|hexValue(v[i+2]))
			i += 2
			continue
		}
		if run >= 0 && !utf8.Valid(b[run:]) {
			return "", true
		}
		run = -1
		b = append(b, v[i])
	}
	if run >= 0 && !utf8.Valid(b[run:]) {
		return "", true
	}
	return trimValue(string(b)), false
}

// isHexDigit reports whether c is a hexadecimal digit, in either case.
func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// hexValue returns the value of the hexadecimal digit c.
func hexValue(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// trimValue returns v without the characters around it that an upstream
// drops from a field's value before reading it, so that " alice" and
// "alice\t" are alice's: Laravel's TrimStrings middleware (Str::trim:
// PCRE's \s, NUL and Str::INVISIBLE_CHARACTERS), Devise's
// strip_whitespace_keys (Ruby's strip: ASCII whitespace and NUL) and
// Django's forms and REST framework (Python's str.strip: Unicode
// whitespace and U+001C to U+001F). It trims what any of them trims (see
// trimmedAround): two spellings one upstream reads apart are only counted
// together. It allocates nothing.
func trimValue(v string) string {
	return strings.TrimFunc(v, trimmedAround)
}

// trimmedAround reports whether trimValue drops r around a value: NUL,
// ASCII and Unicode whitespace (Go's unicode.IsSpace), U+001C to U+001F,
// and the invisible characters of Laravel's Str::INVISIBLE_CHARACTERS (the
// byte order mark U+FEFF, zero-width spaces and joiners U+200B to U+200D,
// direction marks U+200E, U+200F and U+061C, fillers, blanks and invisible
// operators).
func trimmedAround(r rune) bool {
	if r < 0x80 {
		return r == 0 || r == ' ' || '\t' <= r && r <= '\r' || 0x1C <= r && r <= 0x1F
	}
	if unicode.IsSpace(r) {
		return true
	}
	switch r {
	case 0x00AD, 0x034F, 0x061C, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180E, 0x2800, 0x3164, 0xFEFF, 0xFFA0, 0x1D159, 0xE0020:
		return true
	}
	return 0x200B <= r && r <= 0x200F || 0x2060 <= r && r <= 0x2065 || 0x206A <= r && r <= 0x206F || 0x1D173 <= r && r <= 0x1D17A
}
