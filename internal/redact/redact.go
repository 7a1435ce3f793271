// Package redact masks the secrets a message might otherwise show.
package redact

import (
	"encoding/hex"
	"slices"
	"strings"
)

// mask stands in for what URL hides, as url.URL.Redacted writes it.
const mask = "xxxxx"

// URL returns s, a URL as written or mistyped, with the password of its
// user information and the value of each query parameter named as a
// secret replaced by "xxxxx", whatever url.Parse makes of s: it may refuse
// s (a "%" not followed by two hex digits, a "^" or a "/" in the
// password), read a user name as the scheme (admin:secret@host, its
// "http://" forgotten), or read a password as a port and a path
// (http://admin:123/secret@host).
//
// So the user information is read from the text alone. It begins after
// the scheme's "://" (a letter, then letters, digits, "+", "-" or "."),
// or at the start of s when s begins with no scheme, and ends at the last
// "@" of s; s with no "@" there has none. Its password is all that
// follows its first ":"; the user name before it is kept. A user
// information without a ":" is masked whole (redis://secret@host, which
// redis-cli reads as a password; a token given as a user name), unless it
// holds a "/", "?" or "#": the "@" is then in the path, query or fragment,
// and nothing is masked as a password.
//
// The last "@" ends the user information so that a password holding an
// "@" or a "/" is masked whole. A URL with a port and an "@" in its path
// or query shows less than it could (https://host:8443/to/ops@example.com
// as https://host:xxxxx@example.com), never a password, except where
// the text cannot tell a password from a scheme: user://secret@host, a
// user name that could be a scheme written without "http://" and a
// password beginning with "//", reads as the scheme user.
//
// The query begins at the first "?" or "#" (a fragment's parameters, as
// an OAuth redirect carries an access_token, are read as the query's).
// Its parameters are split at "&", ";" and "#" (Rack 2 splits at ";"), and
// each name from its value at the first "=". A parameter is named as a secret (?password=,
// as Redis clients read one; a webhook's ?token=; a JWK Set's
// ?access_token=; a signed URL's X-Amz-Signature or sig) when a word of
// its name, its escapes decoded, in any case, is or ends in one of auth,
// authorization, credential, jwt, key, pass, passphrase, passwd,
// password, pwd, secret, sig, signature or token, or in one of them and
// an "s". Its words are its runs of ASCII letters, and the parts of a run
// split before each capital that follows a lower-case letter:
// access_token, X-Api-Key, accessTokenId, apikey, TOKEN and db_password2
// name secrets; db, keyspace, signal and author do not. A secret's value
// is masked up to the next "&" or "#", past any ";" (the WHATWG URL
// standard, Python's parse_qs and Node read "token=a;b" as one value);
// an empty value is kept empty,
// and every other parameter as written: an operator still reads ?db=2.
//
// A user information masked may hold a "?" and a query an "@": the query
// is read both from the first "?" or "#" of s and from the first after
// the user information, and what either reading masks is masked, so that
// https://host:8443/?token=ab@cd shows as https://host:xxxxx.
func URL(s string) string {
	var hide []span
	start := authority(s)
	after := -1 // the end of the user information masked, if any
	if at := strings.LastIndexByte(s, '@'); at >= start {
		info := s[start:at]
		if user, _, ok := strings.Cut(info, ":"); ok {
			hide, after = append(hide, span{start + len(user) + 1, at}), at
		} else if !strings.ContainsAny(info, "/?#") {
			hide, after = append(hide, span{start, at}), at
		}
	}
	hide = secretValues(s, start, hide)
	if after >= 0 {
		hide = secretValues(s, after, hide)
	}
	if len(hide) == 0 {
		return s
	}
	slices.SortFunc(hide, func(a, b span) int { return a.from - b.from })
	var b strings.Builder
	b.Grow(len(s) + len(mask))
	end := 0 // the end of what is written of s
	for i := 0; i < len(hide); {
		from, to := hide[i].from, hide[i].to
		for i++; i < len(hide) && hide[i].from <= to; i++ {
			to = max(to, hide[i].to)
		}
		b.WriteString(s[end:from])
		b.WriteString(mask)
		end = to
	}
	b.WriteString(s[end:])
	return b.String()
}

// span is the bytes s[from:to] of a URL that URL masks.
type span struct{ from, to int }

// secretValues appends to hide the value of each parameter named as a
// secret of the query that begins at the first "?" or "#" of s from i on.
func secretValues(s string, i int, hide []span) []span {
	q := strings.IndexAny(s[i:], "?#")
	if q < 0 {
		return hide
	}
	for from := i + q + 1; from <= len(s); {
		to := from + strings.IndexAny(s[from:], "&;#")
		if to < from {
			to = len(s)
		}
		if name, value, ok := strings.Cut(s[from:to], "="); ok && secretName(name) {
			end := len(s) // a secret's value: to the next "&" or "#", past any ";"
			if e := strings.IndexAny(s[to:], "&#"); e >= 0 {
				end = to + e
			}
			if v := to - len(value); v < end {
				hide = append(hide, span{v, end})
			}
		}
		from = to + 1
	}
	return hide
}

// secretWords are the words that name a secret, alone or at the end of a
// word of a parameter's name (see URL).
var secretWords = []string{"auth", "authorization", "credential", "jwt", "key", "pass", "passphrase",
	"passwd", "password", "pwd", "secret", "sig", "signature", "token"}

// secretName says whether name, a query parameter's name as written,
// names a secret (see URL).
func secretName(name string) bool {
	name = unescape(name)
	for i := 0; i < len(name); {
		if !isLetter(name[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(name) && isLetter(name[j]) {
			j++
		}
		if secretWord(name[i:j]) {
			return true
		}
		for k := i + 1; k < j; k++ { // the words of a camel-case run
			if isLower(name[k-1]) && !isLower(name[k]) {
				if secretWord(name[i:k]) {
					return true
				}
				i = k
			}
		}
		i = j
	}
	return false
}

// secretWord says whether w, in any case, is or ends in one of
// secretWords, or in one of them and an "s".
func secretWord(w string) bool {
	w = strings.ToLower(w)
	for _, s := range secretWords {
		if strings.HasSuffix(w, s) || strings.HasSuffix(strings.TrimSuffix(w, "s"), s) {
			return true
		}
	}
	return false
}

// unescape decodes each "%" of s followed by two hex digits, and keeps
// every other byte as it is.
func unescape(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if d, err := hex.DecodeString(s[i+1 : i+3]); err == nil {
				b = append(b, d[0])
				i += 2
				continue
			}
		}
		b = append(b, s[i])
	}
	return string(b)
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isLower(c byte) bool  { return 'a' <= c && c <= 'z' }

func authority(s string) int {
	scheme, _, ok := strings.Cut(s, "://")
	if !ok || !isScheme(scheme) {
		return 0
	}
	return len(scheme) + len("://")
}

// isScheme says whether s is a URL scheme (RFC 3986, section 3.1): a
// letter, then letters, digits, "+", "-" or ".".
func isScheme(s string) bool {
	for i, c := range []byte(s) {
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return s != ""
}
