package httplimit

import (
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"unicode"
)

// queryValue returns the first value of the query parameter name in the
// raw query, decoded as url.ParseQuery would give it and without the
// whitespace around it (see trimValue); "" when absent. The parameter is
// found by its name in any case and as PHP names it (see sameName), as
// formValue finds a field. It splits on "&", skips pairs that do not
// decode, and allocates only to decode a pair that has escapes or to
// rename one as PHP does. A parameter given more than once with values
// that differ is ambiguous: upstreams read different ones (Go the first,
// Django and Rails the last).
func queryValue(raw, name string) (first string, ambiguous bool) {
	pn := phpName(name)
	found := false
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if strings.Contains(pair, ";") {
			continue // url.ParseQuery refuses a pair with a semicolon
		}
		k, v, _ := strings.Cut(pair, "=")
		if k == "" && v == "" {
			continue
		}
		if strings.ContainsAny(k, "%+") {
			var err error
			if k, err = url.QueryUnescape(k); err != nil {
				continue
			}
		}
		if !sameName(k, name, pn) {
			continue
		}
		if strings.ContainsAny(v, "%+") {
			var err error
			if v, err = url.QueryUnescape(v); err != nil {
				continue
			}
		}
		switch v = trimValue(v); {
		case !found:
			first, found = v, true
		case v != first:
			return first, true
		}
	}
	return first, false
}

// cookieValue returns the value of the first cookie named name of the
// Cookie header lines of h, without the whitespace around it (inside
// quotes too) and without the quotes Go's and Python's readers drop; ""
// when there is none. A cookie is found by its name in any case, as
// ASP.NET Core's Request.Cookies finds one, and as PHP's $_COOKIE names
// one (see sameName). Cookies of the name with values that differ are
// ambiguous: upstreams read different ones (Go and PHP the first, Django
// the last). It allocates nothing.
func cookieValue(h http.Header, name string) (first string, ambiguous bool) {
	pn := phpName(name)
	found := false
	for _, line := range h["Cookie"] {
		for line != "" {
			var part string
			part, line, _ = strings.Cut(line, ";")
			k, v, _ := strings.Cut(part, "=")
			if !sameName(textproto.TrimString(k), name, pn) {
				continue
			}
			v = trimValue(v)
			if len(v) > 1 && v[0] == '"' && v[len(v)-1] == '"' {
				v = trimValue(v[1 : len(v)-1])
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

// sameName reports whether a field, parameter or cookie sent as k is the
// one a key names name (pn being phpName(name)): k is name in any case, as
// ASP.NET Core reads one, or PHP names k as it names name (in any case
// too), as $_REQUEST, $_COOKIE and Laravel's input() read one.
func sameName(k, name, pn string) bool {
	return strings.EqualFold(k, name) || pn != "" && strings.EqualFold(phpName(k), pn)
}

// phpName returns the name PHP gives a request variable sent as k, its key
// in $_GET, $_POST, $_COOKIE and $_REQUEST: k up to a NUL, without leading
// spaces, with each '.' and ' ' before the first '[' as '_'. A '[' that a
// ']' follows opens an array's indexes, kept as they are; one that none
// follows is '_', and so is each ' ', '.' and '[' after it ("user.email",
// "user email" and "user[email" are all user_email). "" when PHP drops the
// variable (its name is empty before a '['). It allocates only when it
// renames.
func phpName(k string) string {
	if i := strings.IndexByte(k, 0); i >= 0 {
		k = k[:i]
	}
	k = strings.TrimLeft(k, " ")
	i := strings.IndexAny(k, " .[")
	if i < 0 {
		return k
	}
	b := []byte(k)
	for ; i < len(b); i++ {
		switch b[i] {
		case ' ', '.':
			b[i] = '_'
		case '[':
			if i == 0 {
				return ""
			}
			if strings.IndexByte(k[i+1:], ']') >= 0 {
				return string(b)
			}
			for j := i; j < len(b); j++ {
				if b[j] == ' ' || b[j] == '.' || b[j] == '[' {
					b[j] = '_'
				}
			}
			return string(b)
		}
	}
	return string(b)
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
