// Package dialaddr tells a host:port address a client can dial, as the
// configuration's Redis addresses are, from one it cannot.
package dialaddr

import (
	"errors"
	"net"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sluice-dev/sluice/internal/redact"
)

// Check returns nil when s is a host:port address to dial, and otherwise
// an error saying why it is not, which never quotes s.
//
// s splits as net.SplitHostPort splits it ("[::1]:6379" is the host ::1);
// its host is not empty; and its port is a number from 1 to 65535 or the
// name of a TCP service net.LookupPort knows (redis.internal:redis), a
// server without a port being never reached. A host holding an "@", "?",
// "#" or "/" is refused: it is a URL's user information, query or path
// (secret@r.example:6379, r.example/0:6379), never a host, and would be
// shown as written wherever the address is. An address holding a control
// character (U+0000 to U+001F, U+007F to U+009F) or a byte that is no
// UTF-8 is refused too: no host or port holds one, and a YAML file cannot
// hold one as written.
func Check(s string) error {
	if !utf8.ValidString(s) || strings.ContainsFunc(s, unicode.IsControl) {
		return errors.New("it holds a control character or a byte that is no UTF-8")
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		var ae *net.AddrError
		if errors.As(err, &ae) {
			return errors.New(ae.Err) // without ae.Addr, s as written
		}
		return errors.New("not host:port")
	}
	switch {
	case host == "":
		return errors.New("no host")
	case strings.ContainsAny(host, "@?#/"):
		return errors.New(`the host holds a URL's user information, query or path ("@", "?", "#" or "/")`)
	}
	if num, err := net.LookupPort("tcp", port); err != nil || num == 0 {
		return errors.New("the port is neither a number from 1 to 65535 nor a TCP service's name")
	}
	return nil
}

// Shown is s, an address refused, as an error shows it: the password of
// its user information masked (redact.URL), and its query, which may hold
// one (?password=…), replaced by "?…". The user information is masked
// first, so that a "?" in its password ends nothing.
func Shown(s string) string {
	shown := redact.URL(s)
	if before, _, ok := strings.Cut(shown, "?"); ok {
		return before + "?…"
	}
	return shown
}
