// Package redact masks the secrets a message might otherwise show.
package redact

import "strings"

// mask stands in for what URL hides, as url.URL.Redacted writes it.
const mask = "xxxxx"

// URL returns s, a URL as written or mistyped, with the password of its
// user information replaced by "xxxxx", whatever url.Parse makes of s:
// it may refuse s (a "%" not followed by two hex digits, a "^" or a "/"
// in the password), read a user name as the scheme (admin:secret@host,
// its "http://" forgotten), or read a password as a port and a path
// (http://admin:123/secret@host).
//
// So the user information is read from the text alone. It begins after
// the scheme's "://" (a letter, then letters, digits, "+", "-" or "."),
// or at the start of s when s begins with no scheme, and ends at the last
// "@" of s; s with no "@" there is returned as it is. Its password is all
// that follows its first ":"; the user name before it is kept. A user
// information without a ":" is masked whole (redis://secret@host, which
// redis-cli reads as a password; a token given as a user name), unless it
// holds a "/", "?" or "#": the "@" is then in the path, query or fragment,
// and s is returned as it is.
//
// The last "@" ends the user information so that a password holding an
// "@" or a "/" is masked whole. A URL with a port and an "@" in its path
// or query shows less than it could (https://host:8443/to/ops@example.com
// as https://host:xxxxx@example.com), never a password, except where
// the text cannot tell a password from a scheme: user://secret@host, a
// user name that could be a scheme written without "http://" and a
// password beginning with "//", reads as the scheme user.
func URL(s string) string {
	start := authority(s)
	at := strings.LastIndexByte(s, '@')
	if at < start {
		return s
	}
	info := s[start:at]
	if user, _, ok := strings.Cut(info, ":"); ok {
		return s[:start] + user + ":" + mask + s[at:]
	}
	if strings.ContainsAny(info, "/?#") {
		return s
	}
	return s[:start] + mask + s[at:]
}

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
