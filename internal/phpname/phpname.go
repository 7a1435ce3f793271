// Package phpname names a request variable as PHP does before Symfony,
// Laravel or any PHP application reads it, so that sluice reads a query
// parameter, a form field or a cookie under the name the application
// sees ("user.email" is user_email, " _method" is _method).
package phpname

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Name is a request variable's name as PHP names it (see Of), read without
// building that name: s, of which PHP renames some bytes to '_' (see at).
// The zero Name is a variable PHP drops.
type Name struct {
	s string // k up to a NUL, without leading spaces; "" when PHP drops k
	// open is the index in s of the first '[', -1 without one; closed: a
	// ']' follows it, and the array's indexes after it are kept.
	open    int
	closed  bool
	renames bool // PHP renames some byte of s
}

// Of returns k, a request variable's name as sent, as PHP names it, its
// key in $_GET, $_POST, $_COOKIE and $_REQUEST (php_register_variable_ex):
// k up to a NUL, without leading spaces, with each '.' and ' ' before the
// first '[' as '_'. A '[' that a ']' follows opens an array's indexes,
// kept as they are; one that none follows is '_', and so is each ' ', '.'
// and '[' after it ("user.email", "user email" and "user[email" are all
// user_email). PHP drops a variable whose name is empty before a '['.
func Of(k string) Name {
	if i := strings.IndexByte(k, 0); i >= 0 {
		k = k[:i]
	}
	k = strings.TrimLeft(k, " ")
	v := Name{s: k, open: strings.IndexByte(k, '[')}
	end := len(k)
	switch {
	case v.open == 0:
		return Name{open: -1}
	case v.open > 0:
		end = v.open
		v.closed = strings.IndexByte(k[v.open+1:], ']') >= 0
	}
	v.renames = v.open > 0 && !v.closed || strings.ContainsAny(k[:end], " .")
	return v
}

// URLDecode returns s, a request variable's name or value as sent in a
// query string or an application/x-www-form-urlencoded body, decoded as
// PHP decodes it (php_url_decode, urldecode) before naming it: '+' a
// space, "%xx" the byte of its hexadecimal digits, in either case, and a
// '%' that two such digits do not follow kept as it is ("a%zz%41" is
// "a%zzA"), where url.QueryUnescape refuses the whole of s. The result
// may hold a NUL, at which Of cuts a name. It allocates only when s has a
// '+' or a '%'.
func URLDecode(s string) string {
	if !strings.ContainsAny(s, "%+") {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '+':
			b = append(b, ' ')
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

// isHex reports whether c is a hexadecimal digit, in either case.
func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'f'
}

// unhex returns the value of the hexadecimal digit c.
func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return (c | 0x20) - 'a' + 10
}

// at returns the byte PHP's name has at i, of s's bytes: '_' for a ' ' or
// '.' before the array's indexes, and for a '[', ' ' or '.' from a '['
// that no ']' follows.
func (v Name) at(i int) byte {
	c := v.s[i]
	if (c == ' ' || c == '.') && !(v.closed && i > v.open) || c == '[' && !v.closed {
		return '_'
	}
	return c
}

// Dropped reports whether PHP drops the variable: its name is "".
func (v Name) Dropped() bool { return v.s == "" }

// String returns the name, "" for a variable PHP drops. It allocates only
// when PHP renames some byte of the name as sent.
func (v Name) String() string {
	if !v.renames {
		return v.s
	}
	b := make([]byte, len(v.s))
	for i := range b {
		b[i] = v.at(i)
	}
	return string(b)
}

// EqualFold reports whether v and w are one name in any case, as
// strings.EqualFold compares their strings. It allocates nothing.
func (v Name) EqualFold(w Name) bool {
	if !v.renames && !w.renames {
		return strings.EqualFold(v.s, w.s)
	}
	i, j := 0, 0
	for i < len(v.s) && j < len(w.s) {
		r, n := v.runeAt(i)
		q, m := w.runeAt(j)
		if !foldEqual(r, q) {
			return false
		}
		i, j = i+n, j+m
	}
	return i == len(v.s) && j == len(w.s)
}

// runeAt returns the rune of the name at byte i of s and its length in s,
// a byte that is no UTF-8 being utf8.RuneError of length 1.
func (v Name) runeAt(i int) (rune, int) {
	if v.s[i] < utf8.RuneSelf {
		return rune(v.at(i)), 1
	}
	return utf8.DecodeRuneInString(v.s[i:])
}

// foldEqual reports whether r and q are one rune under Unicode simple case
// folding, as strings.EqualFold compares runes.
func foldEqual(r, q rune) bool {
	if r == q {
		return true
	}
	if q < r {
		r, q = q, r
	}
	if q < utf8.RuneSelf {
		return 'A' <= r && r <= 'Z' && q == r+'a'-'A'
	}
	f := unicode.SimpleFold(r)
	for f != r && f < q {
		f = unicode.SimpleFold(f)
	}
	return f == q
}
