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
// building that name: s, of which PHP renames some bytes to '_' (see at)
// and leaves out the whitespace of an index of one such byte (see skips).
// The zero Name is a variable PHP drops.
type Name struct {
	s string // k up to a NUL, without leading spaces, up to where its array's indexes end; "" when PHP drops k
	// open is the index in s of the first '[', -1 without one; closed: a
	// ']' follows it, and the array's indexes after it are kept.
	open    int
	closed  bool
	renames bool // PHP renames or leaves out some byte of s
}

// Of returns k, a request variable's name as sent, as PHP names it, its
// key in $_GET, $_POST, $_COOKIE and $_REQUEST (php_register_variable_ex):
// k up to a NUL, without leading spaces, with each '.' and ' ' before the
// first '[' as '_'. A '[' that a ']' follows opens an array's indexes,
// each up to the first ']' after its '[', kept as it is but for an index
// of one whitespace byte, which is "[]"; a '[' right after that ']' opens
// the next, and what follows the last is no part of the name
// ("user[email]x" and "user[email][x" are user[email]). A first '[' that
// no ']' follows is '_', and so is each ' ', '.' and '[' after it
// ("user.email", "user email" and "user[email" are all user_email). PHP
// drops a variable whose name is empty before a '['. A multipart field's
// name is read by PartName first.
func Of(k string) Name {
	if i := strings.IndexByte(k, 0); i >= 0 {
		k = k[:i]
	}
	k = strings.TrimLeft(k, " ")
	v := Name{s: k, open: strings.IndexByte(k, '[')}
	end, blank := len(k), false
	switch {
	case v.open == 0:
		return Name{open: -1}
	case v.open > 0:
		end = v.open
		var n int
		n, blank = indexes(k[v.open:])
		if v.closed = n > 0; v.closed {
			v.s = k[:v.open+n]
		}
	}
	v.renames = v.open > 0 && !v.closed || blank || strings.ContainsAny(k[:end], " .")
	return v
}

// indexes returns the length of the array's indexes that open s, at its
// '[', as PHP reads them: each from a '[' to the first ']' after it, the
// next opening right after that ']'; 0 when no ']' follows the first. A
// '[' that no ']' follows after an index ends them. blank reports an index
// of one whitespace byte, which PHP reads as "[]".
func indexes(s string) (n int, blank bool) {
	for n < len(s) && s[n] == '[' {
		j := strings.IndexByte(s[n+1:], ']')
		if j < 0 {
			break
		}
		blank = blank || j == 1 && isSpace(s[n+1])
		n += j + 2
	}
	return n, blank
}

// PartName returns k, the name of a multipart/form-data field as sent, as
// PHP's multipart reader (rfc1867_post_handler) passes it on to be named
// (normalize_protected_variable), Of naming the result: k up to a NUL,
// each of its array's indexes without the ' ', '\t', '\r' and '\n' that
// open it, and what follows the last no part of it. So "user[ email]" and
// "user[\temail]" are user[email] as a multipart field's name, and not as
// a query parameter's, which Of reads as sent. An index ends at the first
// ']' after its '[' and, without one, at the end of k; a '[' right after
// that ']' opens the next. It allocates only when an index opens with
// whitespace.
func PartName(k string) string {
	if i := strings.IndexByte(k, 0); i >= 0 {
		k = k[:i]
	}
	i := strings.IndexByte(k, '[')
	if i < 0 {
		return k
	}
	var b []byte // the name, once it differs from a prefix of k
	for i < len(k) && k[i] == '[' {
		j := i + 1
		for j < len(k) && strings.IndexByte(" \t\r\n", k[j]) >= 0 {
			j++
		}
		if b == nil && j > i+1 {
			b = append(make([]byte, 0, len(k)), k[:i]...)
		}
		e := len(k)
		if c := strings.IndexByte(k[j:], ']'); c >= 0 {
			e = j + c + 1
		}
		if b != nil {
			b = append(b, '[')
			b = append(b, k[j:e]...)
		}
		i = e
	}
	if b == nil {
		return k[:i]
	}
	return string(b)
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

// skips reports whether PHP leaves out the byte at i of s: the whitespace
// of an index of one whitespace byte, which it reads as "[]".
func (v Name) skips(i int) bool {
	return v.closed && i > v.open && i+1 < len(v.s) && isSpace(v.s[i]) &&
		v.s[i-1] == '[' && v.s[i+1] == ']' && (i-1 == v.open || v.s[i-2] == ']')
}

// isSpace reports whether c is whitespace to C's isspace in PHP's (the C)
// locale.
func isSpace(c byte) bool {
	return strings.IndexByte(" \t\n\v\f\r", c) >= 0
}

// Dropped reports whether PHP drops the variable: its name is "".
func (v Name) Dropped() bool { return v.s == "" }

// String returns the name, "" for a variable PHP drops. It allocates only
// when PHP renames or leaves out some byte of the name as sent.
func (v Name) String() string {
	if !v.renames {
		return v.s
	}
	b := make([]byte, 0, len(v.s))
	for i := range len(v.s) {
		if !v.skips(i) {
			b = append(b, v.at(i))
		}
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
	for {
		if i < len(v.s) && v.skips(i) {
			i++
		}
		if j < len(w.s) && w.skips(j) {
			j++
		}
		if i == len(v.s) || j == len(w.s) {
			return i == len(v.s) && j == len(w.s)
		}
		r, n := v.runeAt(i)
		q, m := w.runeAt(j)
		if !foldEqual(r, q) {
			return false
		}
		i, j = i+n, j+m
	}
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
