package httplimit

import (
	"bytes"
	"regexp"
	"strings"
)

// partHeads returns the head of each part of a multipart body of the given
// boundary, as mime/multipart delimits the parts: the lines between a
// part's boundary delimiter line and the blank line that ends its header,
// each with its line end, which is the head Rack reads the part's name
// from. It stops at the final boundary, or where mime/multipart would
// report an error: a caller compares the count with the parts it read.
func partHeads(body []byte, boundary string) (heads [][]byte) {
	dash := "--" + boundary
	nl := "\r\n"
	rest := body
	for {
		line, after := cutLine(rest)
		switch {
		case isDelimiterLine(line, dash, &nl, len(heads) == 0):
			n := 0
			for {
				l, a := cutLine(after[n:])
				if a == nil { // the header does not end
					return heads
				}
				if string(l) == "\n" || string(l) == "\r\n" {
					break
				}
				n += len(l)
			}
			heads = append(heads, after[:n])
			_, content := cutLine(after[n:])
			end := partEnd(content, dash, nl)
			if end < 0 {
				return heads
			}
			rest, _ = bytes.CutPrefix(content[end:], []byte(nl))
		case len(heads) == 0 && after != nil: // the preamble
			rest = after
		default: // the final boundary, or a line mime/multipart refuses
			return heads
		}
	}
}

// cutLine returns the first line of b, with its '\n', and what follows it;
// after is nil when b holds no '\n'.
func cutLine(b []byte) (line, after []byte) {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i+1], b[i+1:]
	}
	return b, nil
}

// isDelimiterLine reports whether line is a boundary delimiter line to
// mime/multipart: dash, spaces or tabs, and the line end nl, which becomes
// "\n" when the first one ends so (first).
func isDelimiterLine(line []byte, dash string, nl *string, first bool) bool {
	rest, ok := bytes.CutPrefix(line, []byte(dash))
	if !ok {
		return false
	}
	rest = bytes.TrimLeft(rest, " \t")
	if first && string(rest) == "\n" {
		*nl = "\n"
	}
	return string(rest) == *nl
}

// partEnd returns where the content of a part, content followed by the
// rest of the body, ends as mime/multipart reads it: before the line end
// and dash that a space, tab, line end, "--" or the body's end follows, or
// at once when content starts with such a dash; -1 when there is none.
func partEnd(content []byte, dash, nl string) int {
	from := 0
	if bytes.HasPrefix(content, []byte(dash)) {
		if boundaryFollows(content, len(dash)) {
			return 0
		}
		from = len(dash)
	}
	nlDash := []byte(nl + dash)
	for {
		i := bytes.Index(content[from:], nlDash)
		if i < 0 {
			return -1
		}
		if i += from; boundaryFollows(content, i+len(nlDash)) {
			return i
		}
		from = i + len(nlDash)
	}
}

// boundaryFollows reports whether what follows a dash ending at b[i] makes
// it a boundary to mime/multipart.
func boundaryFollows(b []byte, i int) bool {
	switch {
	case i == len(b):
		return true
	case b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n':
		return true
	}
	return b[i] == '-' && i+1 < len(b) && b[i+1] == '-'
}

// asciiFold returns a pattern matching s in any ASCII case, as a Ruby
// pattern of the i flag matches a binary string: (?i) would also fold
// 's' with U+017F and 'k' with U+212A.
func asciiFold(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		switch {
		case 'a' <= c && c <= 'z':
			b.WriteString("[" + string(c-'a'+'A') + string(c) + "]")
		case 'A' <= c && c <= 'Z':
			b.WriteString("[" + string(c) + string(c-'A'+'a') + "]")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return b.String()
}

// Rack 2.2's patterns (Rack::Multipart), its \s spelled out. Go's regexp
// picks, among the leftmost matches, the one Ruby's backtracking picks.
const (
	rackSpace     = `[\t\n\v\f\r ]`
	rackToken     = `[^\t\n\v\f\r ()<>,;:\\"/\[\]?=]+`
	rackValue     = `"(?:\\"|[^"])*"|` + rackToken
	rackAttrChar  = `[^ \x00-\x1f\x7f)(><@,;:\\"/\[\]?='*%]`
	rackOtherVal  = `(?:%[0-9a-fA-F]{2}|` + rackAttrChar + `)*`
	rackDispParam = `;` + rackSpace + `*(?:` +
		`(` + rackAttrChar + `+(?:\*[0-9]+)?)=(` + rackValue + `)|` +
		`(` + rackAttrChar + `+(?:\*0)?\*)=([a-zA-Z0-9\-]*'[a-zA-Z0-9\-]*'` + rackOtherVal + `)|` +
		`(` + rackAttrChar + `+\*[1-9][0-9]*\*)=(` + rackOtherVal + `))` + rackSpace + `*`
)

var (
	// rack2Name is MULTIPART_CONTENT_DISPOSITION: anywhere in the head,
	// not anchored to a line's start, and across lines but no colon.
	rack2Name = regexp.MustCompile(asciiFold("Content-Disposition:") + `[^:]*;` + rackSpace + `*` + asciiFold("name=") + `(` + rackValue + `)`)
	// rack2ID is MULTIPART_CONTENT_ID.
	rack2ID = regexp.MustCompile(asciiFold("Content-ID:") + rackSpace + `*([^\r\n]*)`)
	// rack2RFC2183, rack2DispParam and rack2Broken are what Rack 2.2's
	// get_filename reads a part's file name by.
	rack2CondDisp  = `(?m:^)` + asciiFold("Content-Disposition:") + rackSpace + `*` + rackToken + rackSpace + `*`
	rack2RFC2183   = regexp.MustCompile(rack2CondDisp + `(?:` + rackDispParam + `)+(?m:$)`)
	rack2DispParam = regexp.MustCompile(rackDispParam)
	rack2Broken    = regexp.MustCompile(rack2CondDisp + `.*;` + rackSpace + `*` + asciiFold("filename=") + `(?:` + rackValue + `)`)
	// rack3Disposition and rack3ID are Rack 3's MULTIPART_CONTENT_DISPOSITION
	// and MULTIPART_CONTENT_ID: a header at a line's start, folded lines
	// and all.
	rack3Disposition = regexp.MustCompile(`(?m:^)` + asciiFold("Content-Disposition:") + `(?:[ \t]+(?:\r\n[ \t]+)?)?((?:[^\r\n]|\r\n[ \t])*)`)
	rack3ID          = regexp.MustCompile(`(?m:^)` + asciiFold("Content-ID:") + `(?:[ \t]+(?:\r\n[ \t]+)?)?((?:[^\r\n]|\r\n[ \t])*)`)
)

// rack2PartName returns the name of the field Rack 2.2 reads a multipart
// part of the given head as, "" for none (a file, or a part it names
// nothing): the value after the first "Content-Disposition:" anywhere in
// the head (in any case, X-Content-Disposition's too) that a ';',
// whitespace and "name=" follow with no colon between, the last such
// name= before a colon, its quotes and backslash escapes undone (Rack's
// dequote); without one the part's Content-ID (its first
// "Content-ID:", unanchored too, after whitespace, to the line's end). A
// part with a file name (see rack2HasFileName) is a file.
func rack2PartName(head string) string {
	if rack2HasFileName(head) {
		return ""
	}
	if m := rack2Name.FindStringSubmatch(head); m != nil {
		return rubyDequote(m[1])
	}
	if m := rack2ID.FindStringSubmatch(head); m != nil {
		return m[1]
	}
	return ""
}

// rubyDequote is Rack's dequote (WEBrick's): s without the quotes around
// it when no line end is within them, then without the backslash of each
// backslash escape but one of a line end.
func rubyDequote(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' && !strings.Contains(s[1:len(s)-1], "\n") {
		s = s[1 : len(s)-1]
	}
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && s[i+1] != '\n' {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// rack2HasFileName reports whether Rack 2.2 reads a file name in a part's
// head (get_filename), which makes the part a file, or drops it when the
// name is empty: when a Content-Disposition line is wholly parameters
// (RFC2183), a filename or filename* parameter (in lower case) anywhere in
// the head; otherwise a Content-Disposition line with ";filename=" in any
// case. filename*0= (a continuation) is neither.
func rack2HasFileName(head string) bool {
	if !rack2RFC2183.MatchString(head) {
		return rack2Broken.MatchString(head)
	}
	file, star := false, false
	for _, m := range rack2DispParam.FindAllStringSubmatchIndex(head, -1) {
		for g := 2; g < len(m); g += 4 {
			if m[g] >= 0 {
				switch head[m[g]:m[g+1]] {
				case "filename":
					file = true
				case "filename*":
					star = true
				}
			}
		}
	}
	return file || star
}

// rack3MaxDisposition and rack3MaxParams are Rack 3's
// CONTENT_DISPOSITION_MAX_BYTES and CONTENT_DISPOSITION_MAX_PARAMS.
const (
	rack3MaxDisposition = 1536
	rack3MaxParams      = 16
)

// rack3PartName returns the name of the field Rack 3 reads a multipart
// part of the given head as, "" for none: from the first
// Content-Disposition header (at a line's start, in any case) of at most
// 1536 bytes, its parameters after the first ';', the first 16 of them,
// each named as written (name, not NAME) and valued quoted, backslash
// escapes undone, or up to a ';'; without such a header the part's
// Content-ID. A filename or filename* parameter makes the part a file,
// filename*0 not.
func rack3PartName(head string) string {
	m := rack3Disposition.FindStringSubmatch(head)
	if m == nil || len(m[1]) > rack3MaxDisposition {
		if m := rack3ID.FindStringSubmatch(head); m != nil {
			return m[1]
		}
		return ""
	}
	d := m[1]
	i := strings.IndexByte(d, ';')
	if i < 0 { // Rack 3 fails the request
		return ""
	}
	d = d[i+1:]
	name, file := "", false
	for n := 0; n < rack3MaxParams; n++ {
		i := strings.IndexByte(d, '=')
		if i < 0 {
			break
		}
		param := strings.TrimLeft(d[:i], rubySpace)
		d = d[i+1:]
		var value string
		if strings.HasPrefix(d, `"`) {
			d = d[1:]
			var b strings.Builder
			for {
				j := strings.IndexAny(d, `"\`)
				if j < 0 {
					break
				}
				c := d[j]
				b.WriteString(d[:j])
				d = d[j+1:]
				if c == '"' {
					break
				}
				if d != "" {
					b.WriteByte(d[0])
					d = d[1:]
				}
			}
			value = b.String()
		} else if j := strings.IndexByte(d, ';'); j >= 0 {
			value, d = d[:j], d[j:]
		} else {
			value, d = strings.Trim(d, rubySpace), ""
		}
		switch param {
		case "name":
			name = value
		case "filename", "filename*":
			file = true
		}
		if j := strings.IndexByte(d, ';'); j >= 0 {
			d = d[j+1:]
		}
	}
	if file {
		return ""
	}
	return name
}

// rubySpace is what Ruby's strip and lstrip remove.
const rubySpace = "\x00\t\n\v\f\r "
