// Package querypair reads the pairs ("k=v") of a query string or of an
// application/x-www-form-urlencoded body that carry one name, as the
// upstreams behind sluice read them, so that a key or a method override
// is read as the application reads it.
//
// A pair is read as Go's url.ParseQuery reads it: its name and value
// decoded ("+" a space, "%xx" a byte). Pairs are split on every "&",
// however many there are: url.ParseQuery returns none of a query of more
// than 10,000, PHP reads them all. A pair carries a name when its name is
// that name in any case, as ASP.NET Core reads one, or when PHP names it
// as it names that name, in any case too (see internal/phpname: ".method"
// and " _method" are _method to Symfony's $_GET and Laravel's input()).
//
// Where the upstreams may read a pair of the name differently, no value
// of it is the one the application acts on, and the package says so
// rather than pick a reading: a pair url.ParseQuery refuses, one holding
// a ";" (Rack 2 splits a query on ";" too, so "x=1;tenant=acme" carries
// tenant to it) or an escape that does not decode (PHP, Django and
// Express keep it as it is), whose name, or the name of one of its parts
// split on ";", is the name to one of them (a name read, escape by
// escape, as PHP reads it: "tenant%00%zz" is tenant to PHP, which cuts a
// name at its first NUL); and a pair whose name Rack 2
// alone reads as the name, by the brackets it strips ("[tenant]",
// "tenant]"). A "#" is a byte like any other: a caller that reads a
// request target as nginx or PHP do cuts the query there first.
package querypair

import (
	"net/url"
	"strings"

	"github.com/sluice-dev/sluice/internal/phpname"
)

// Values calls add with the value of each pair of raw, a query string or
// an application/x-www-form-urlencoded body, that carries name, in order,
// decoded and not trimmed. It splits raw on "&" however many pairs it has
// and reads all of it, a "#" too. It stops and returns false at a pair of
// the name that upstreams may read differently (see the package
// documentation); it returns true when every pair of the name was read.
// It keeps no reference to add, and allocates only to decode a pair that
// has escapes.
func Values(raw, name string, add func(v string)) bool {
	pn := phpname.Of(name)
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		switch v, named, ok := pairValue(pair, name, pn); {
		case named && !ok:
			return false
		case named:
			add(v)
		}
	}
	return true
}

// SameName reports whether a pair, field or cookie sent under the name k,
// decoded, carries name (pn being phpname.Of(name)): k is name in any
// case, as ASP.NET Core reads one, or PHP names k as it names name, in
// any case too, as $_REQUEST, $_COOKIE and Laravel's input() read one. A
// name PHP drops (pn.Dropped) is matched in any case only. It allocates
// nothing.
func SameName(k, name string, pn phpname.Name) bool {
	return strings.EqualFold(k, name) || !pn.Dropped() && phpname.Of(k).EqualFold(pn)
}

// Rack2Named reports whether Rack 2 (and Rails 7.1 to 8.0 on it) reads a
// field sent under the name k, which is not name, as name: its
// normalize_params drops the "[" and "]" before each segment of a name
// and the "]" after it, so "[email]", "email]" and "]email" are email,
// and "[user][email]", "user][email]" and "user[[email]]" are
// user[email]. Rack 3 and the other upstreams read k as a name of its
// own. Segments are matched in any case, as SameName matches a name. It
// allocates nothing.
func Rack2Named(k, name string) bool {
	if !strings.ContainsAny(k, "[]") {
		return false
	}
	for {
		ks, kAfter, kOK := rack2Segment(k)
		ns, nAfter, nOK := rack2Segment(name)
		if !kOK || !nOK || !strings.EqualFold(ks, ns) {
			return false
		}
		if kAfter == "" || nAfter == "" {
			return kAfter == nAfter
		}
		k, name = kAfter, nAfter
	}
}

// pairValue reads one pair ("k=v") as url.ParseQuery reads it: named
// reports that it carries name (pn being phpname.Of(name)), v is its
// value, decoded. A pair url.ParseQuery refuses (one with a semicolon, or
// an escape that does not decode) is not ok, and named when an upstream
// that reads it anyway may take it for name: PHP, Django and Express keep
// an escape that does not decode as it is, decoding the others (see
// unescape), and Rack 2 splits a query on ";" too. So is a pair Rack 2
// alone reads as name (see Rack2Named). It allocates only to decode a
// pair that has escapes.
func pairValue(pair, name string, pn phpname.Name) (v string, named, ok bool) {
	if strings.Contains(pair, ";") {
		return "", semicolonNamed(pair, name, pn), false
	}
	if pair == "" {
		return "", false, true
	}
	k, v, _ := strings.Cut(pair, "=")
	k, ok = unescape(k)
	if !SameName(k, name, pn) {
		if Rack2Named(k, name) {
			return "", true, false
		}
		return "", false, ok
	}
	if !ok {
		return "", true, false
	}
	if v, ok = unescape(v); !ok {
		return "", true, false
	}
	return v, true, true
}

// semicolonNamed reports whether a pair with a semicolon carries name (pn
// being phpname.Of(name)) in one of its parts split on ";", as Rack 2
// reads a query.
func semicolonNamed(pair, name string, pn phpname.Name) bool {
	for pair != "" {
		var part string
		part, pair, _ = strings.Cut(pair, ";")
		k, _, _ := strings.Cut(part, "=")
		if k, _ = unescape(k); SameName(k, name, pn) || Rack2Named(k, name) {
			return true
		}
	}
	return false
}

// rack2Segment returns the first segment of a field's name s as Rack 2's
// normalize_params reads it (\A[\[\]]*([^\[\]]+)\]*), and what follows it.
// It reports false when s has no segment, or when what follows makes the
// field no member of a hash of the segment: "[", which Rack 2 reads as
// part of the whole name, or "[]", an array.
func rack2Segment(s string) (seg, after string, ok bool) {
	i := 0
	for i < len(s) && (s[i] == '[' || s[i] == ']') {
		i++
	}
	j := i
	for j < len(s) && s[j] != '[' && s[j] != ']' {
		j++
	}
	seg = s[i:j]
	for j < len(s) && s[j] == ']' {
		j++
	}
	after = s[j:]
	if seg == "" || after == "[" || strings.HasPrefix(after, "[]") {
		return "", "", false
	}
	return seg, after, true
}

// unescape returns s decoded as url.QueryUnescape decodes it, or, when an
// escape of it does not decode, s decoded escape by escape as PHP decodes
// it, that escape kept as it is (see phpname.URLDecode), and false: the
// name PHP, Django and ASP.NET Core read. It allocates only when s has
// escapes.
func unescape(s string) (string, bool) {
	if !strings.ContainsAny(s, "%+") {
		return s, true
	}
	u, err := url.QueryUnescape(s)
	if err != nil {
		return phpname.URLDecode(s), false
	}
	return u, true
}
