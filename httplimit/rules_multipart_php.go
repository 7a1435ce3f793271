package httplimit

import (
	"bytes"
	"strings"

	"github.com/sluice-dev/sluice/internal/phpname"
)

// phpFillUnit is the least size of PHP's multipart read buffer
// (main/rfc1867.c's FILLUNIT); a longer boundary makes it larger.
const phpFillUnit = 5 * 1024

// phpParts returns the parts of a multipart/form-data body of the given
// boundary as PHP's reader (main/rfc1867.c, rfc1867_post_handler)
// delimits them, at most limit of them, and the name of the field PHP
// reads each as ("" for none; see phpPartName). PHP reads the body as
// lines, each up to a '\n' without it and a '\r' before it, or of the
// buffer's size when no '\n' comes within it, and each read up to a NUL.
// A part opens after a line that is "--boundary", anywhere (in a
// preamble or past the final delimiter too, "--boundary--" being no line
// it looks for); its head runs to a line that is empty, its headers
// continued by a line that opens with whitespace or holds no colon; its
// value runs to the first "\n--boundary" in the body, followed by
// anything, a '\r' before it left out. A part PHP skips (no
// Content-Disposition, a file it does not save) or a file it stops
// writing ends instead at the next line that is "--boundary": a caller
// that finds no "--boundary" within any part's value knows the parts
// returned are the parts PHP reads, whatever it saves. It takes time
// linear in the body.
func phpParts(body []byte, boundary string, limit int) (parts []rawPart, names []string) {
	size := max(len(boundary)+6, phpFillUnit)
	dash := "--" + boundary
	at, ok := phpDelimiter(body, 0, dash, size)
	for ok && len(parts) < limit {
		headEnd, start, disposition := phpHead(body, at, size)
		value := phpValue(body[start:], "\n"+dash)
		parts = append(parts, rawPart{body[at:headEnd], value})
		names = append(names, phpPartName(disposition))
		at, ok = phpDelimiter(body, start+len(value), dash, size)
	}
	return parts, names
}

// phpLine returns the line of body at body[at] as PHP's reader (get_line)
// reads it, up to a NUL (see cString), and where the next one starts: up
// to the first '\n', without it and a '\r' before it, or the first size
// bytes when no '\n' is among them. ok is false where no line is left:
// the body ends fewer than size bytes on, without a '\n'.
func phpLine(body []byte, at, size int) (line []byte, next int, ok bool) {
	rest := body[at:]
	n := min(len(rest), size)
	if i := bytes.IndexByte(rest[:n], '\n'); i >= 0 {
		line = rest[:i]
		if i > 0 && rest[i-1] == '\r' {
			line = rest[:i-1]
		}
		return cString(line), at + i + 1, true
	}
	if n < size {
		return nil, at, false
	}
	return cString(rest[:size]), at + size, true
}

// cString returns b up to its first NUL, as C reads a string.
func cString(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

// phpDelimiter returns where the part after the first line at or after
// body[at] that is dash starts (find_boundary), or ok false for none.
func phpDelimiter(body []byte, at int, dash string, size int) (int, bool) {
	for {
		line, next, ok := phpLine(body, at, size)
		if !ok {
			return 0, false
		}
		if string(line) == dash {
			return next, true
		}
		at = next
	}
}

// phpHead reads a part's head at body[at] as PHP does
// (multipart_buffer_headers): it returns where the head ends, before the
// empty line that ends it (or the body's unread end), where the part's
// value starts, after that line, and the value of its first header named
// Content-Disposition, in any ASCII case, "" for none: after the colon and
// the whitespace after it, with each line that continues it (one that
// opens with whitespace or holds no colon) joined to it as it is.
func phpHead(body []byte, at, size int) (end, start int, disposition string) {
	var d []byte
	found, in := false, false
	for {
		line, next, ok := phpLine(body, at, size)
		if !ok || len(line) == 0 {
			return at, next, string(d)
		}
		colon := -1
		if !phpSpace(line[0]) {
			colon = bytes.IndexByte(line, ':')
		}
		switch {
		case colon >= 0:
			key := string(line[:colon])
			in = !found && len(key) == len("content-disposition") && equalASCIIFold(key, "content-disposition")
			if in {
				found = true
				v := line[colon+1:]
				for len(v) > 0 && phpSpace(v[0]) {
					v = v[1:]
				}
				d = append([]byte(nil), v...)
			}
		case in:
			d = append(d, line...)
		}
		at = next
	}
}

// phpValue returns the value PHP reads of a part whose value opens rest
// (multipart_buffer_read_body): up to the first needle ("\n--boundary"),
// or what of it the body's end leaves, without a '\r' before it; the
// whole of rest without one.
func phpValue(rest []byte, needle string) []byte {
	i := bytes.Index(rest, []byte(needle))
	for j := max(0, len(rest)-len(needle)+1); i < 0 && j < len(rest); j++ {
		if strings.HasPrefix(needle, string(rest[j:])) {
			i = j
		}
	}
	if i < 0 {
		return rest
	}
	if i > 0 && rest[i-1] == '\r' {
		i--
	}
	return rest[:i]
}

// phpPartName returns the name of the field PHP reads a part of the given
// Content-Disposition as, "" for none: PHP splits it at each ';' outside
// double or single quotes (a backslash escaping one), whatever its type or
// whether there is one, and of each piece holding a '=' takes what is
// before the first '=' outside quotes as a parameter's name, as it is:
// the value of the last named "name" (in any ASCII case) is the field's
// name (see phpParamValue), as PHP passes it on to be named, the
// whitespace opening each array index dropped and what follows the last
// cut (see phpname.PartName: "user[ email]x" is user[email]); a parameter
// named "filename" (not "filename*") makes the part a file.
func phpPartName(disposition string) string {
	d := strings.TrimLeft(disposition, phpSpaces)
	name, named, file := "", false, false
	for d != "" {
		var pair, key, value string
		pair, d = phpWord(d, ';')
		d = strings.TrimLeft(d, phpSpaces)
		if !strings.Contains(pair, "=") {
			continue
		}
		key, value = phpWord(pair, '=')
		switch {
		case len(key) == len("name") && equalASCIIFold(key, "name"):
			name, named = phpParamValue(value), true
		case len(key) == len("filename") && equalASCIIFold(key, "filename"):
			file = true
		}
	}
	if file || !named {
		return ""
	}
	return phpname.PartName(name)
}

// phpWord returns s up to the first stop outside quotes, and what follows
// it and the stops after it (php_ap_getword); s whole and "" without one.
func phpWord(s string, stop byte) (word, rest string) {
	i := 0
	for i < len(s) && s[i] != stop {
		q := s[i]
		i++
		if q != '"' && q != '\'' {
			continue
		}
		for i < len(s) && s[i] != q {
			if s[i] == '\\' && i+1 < len(s) && s[i+1] == q {
				i++
			}
			i++
		}
		if i < len(s) {
			i++
		}
	}
	if i == len(s) {
		return s, ""
	}
	word = s[:i]
	for i < len(s) && s[i] == stop {
		i++
	}
	return word, s[i:]
}

// phpParamValue returns a parameter's value as PHP reads it
// (php_ap_getword_conf): after whitespace, up to the double or single
// quote that closes the one it opens with, or to the end when none does,
// or else up to whitespace; a backslash before a backslash, or before the
// quote within quotes, escapes it.
func phpParamValue(s string) string {
	s = strings.TrimLeft(s, phpSpaces)
	var quote byte
	if s != "" && (s[0] == '"' || s[0] == '\'') {
		quote, s = s[0], s[1:]
	} else if i := strings.IndexAny(s, phpSpaces); i >= 0 {
		s = s[:i]
	}
	var b strings.Builder
	for i := 0; i < len(s) && (quote == 0 || s[i] != quote); i++ {
		if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '\\' || quote != 0 && s[i+1] == quote) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// phpSpaces are the bytes C's isspace reports in PHP's (the C) locale.
const phpSpaces = " \t\n\v\f\r"

// phpSpace reports whether c is one of phpSpaces.
func phpSpace(c byte) bool {
	return strings.IndexByte(phpSpaces, c) >= 0
}
