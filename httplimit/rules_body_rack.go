package httplimit

import "strings"

// Rack 2.2 reads a part's name and file name by regular expressions
// (Rack::Multipart's MULTIPART_CONTENT_DISPOSITION, MULTIPART_CONTENT_ID,
// RFC2183, DISPPARM and BROKEN). The functions below read a head as those
// patterns match it, Ruby's backtracking choosing among matches, byte by
// byte in time linear in the head: its \s is rackSpace, its letters match
// in any ASCII case where the pattern has the i flag, and the disposition
// parameters' names as written.

// rackSpace reports whether c is Ruby's \s.
func rackSpace(c byte) bool {
	return c == ' ' || '\t' <= c && c <= '\r'
}

// rackToken reports whether c is of Rack's TOKEN: not whitespace nor one of
// ()<>,;:\"/[]?=.
func rackToken(c byte) bool {
	return !rackSpace(c) && strings.IndexByte(`()<>,;:\"/[]?=`, c) < 0
}

// rackAttrChar reports whether c is of Rack's ATTRIBUTE_CHAR: no space,
// control character nor one of )(><@,;:\"/[]?='*%.
func rackAttrChar(c byte) bool {
	return c > ' ' && c != 0x7f && strings.IndexByte(`)(><@,;:\"/[]?='*%`, c) < 0
}

// skipSpace returns the index of the first byte of s at or after i that is
// not Ruby's \s, len(s) for none.
func skipSpace(s string, i int) int {
	return skipWhile(s, i, rackSpace)
}

// skipWhile returns the index of the first byte of s at or after i not of
// class, len(s) for none.
func skipWhile(s string, i int, class func(byte) bool) int {
	for i < len(s) && class(s[i]) {
		i++
	}
	return i
}

// hasFoldPrefix reports whether s[i:] starts with lower, a lower-case
// ASCII text, in any ASCII case (as Ruby's i flag matches a binary
// string).
func hasFoldPrefix(s string, i int, lower string) bool {
	if len(s)-i < len(lower) {
		return false
	}
	for j := 0; j < len(lower); j++ {
		c := s[i+j]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[j] {
			return false
		}
	}
	return true
}

// indexFold returns the index of the first lower, in any ASCII case, in s
// at or after i; -1 for none.
func indexFold(s string, i int, lower string) int {
	for ; i+len(lower) <= len(s); i++ {
		if hasFoldPrefix(s, i, lower) {
			return i
		}
	}
	return -1
}

// quotedEnd returns the end of the quoted text that opens at s[open] as
// Rack's "(?:\\"|[^"])*" matches it first: to the first quote no
// backslash escapes, or to the last escaped one when no quote follows it;
// -1 when no quote follows s[open]. lastQuote is the index of s's last
// '"'.
func quotedEnd(s string, open, lastQuote int) int {
	if lastQuote <= open {
		return -1
	}
	for i := open + 1; ; i++ {
		switch {
		case s[i] == '"':
			return i + 1
		case s[i] == '\\' && s[i+1] == '"':
			if lastQuote < i+2 {
				return i + 2
			}
			i++
		}
	}
}

// rackValueEnd returns the end of Rack's VALUE (a quoted text, see
// quotedEnd, or a TOKEN) at s[i], -1 for none.
func rackValueEnd(s string, i, lastQuote int) int {
	if i < len(s) && s[i] == '"' {
		return quotedEnd(s, i, lastQuote)
	}
	if j := skipWhile(s, i, rackToken); j > i {
		return j
	}
	return -1
}

// extValueEnd returns the end of Rack's EXTENDED_OTHER_VALUES at s[i]:
// '%' and two hexadecimal digits or ATTRIBUTE_CHARs, as many as follow.
func extValueEnd(s string, i int) int {
	for i < len(s) {
		switch {
		case s[i] == '%' && i+2 < len(s) && isHexDigit(s[i+1]) && isHexDigit(s[i+2]):
			i += 3
		case rackAttrChar(s[i]):
			i++
		default:
			return i
		}
	}
	return i
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// isCharsetChar reports whether c is of [a-zA-Z0-9\-].
func isCharsetChar(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '-'
}

// dispParam reads Rack's DISPPARM at s[semi], a ';', as Ruby matches it
// first: the parameter's name, the end of its value (its trailing
// whitespace not included), and whether the value is quoted, which may
// end it at a later quote too (see dispParamsReachEnd). ok is false when
// no DISPPARM starts at s[semi].
func dispParam(s string, semi, lastQuote int) (name string, end int, quoted, ok bool) {
	a := skipSpace(s, semi+1)
	j := skipWhile(s, a, rackAttrChar)
	if j == a || j == len(s) {
		return "", 0, false, false
	}
	// REGULAR_PARAMETER: a name, "*" and digits or not, "=" and a VALUE.
	k := j
	if s[k] == '*' {
		if d := skipWhile(s, k+1, isDigit); d > k+1 {
			k = d
		}
	}
	if k < len(s) && s[k] == '=' {
		if e := rackValueEnd(s, k+1, lastQuote); e >= 0 {
			return s[a:k], e, s[k+1] == '"', true
		}
	}
	if s[j] != '*' {
		return "", 0, false, false
	}
	// EXTENDED_INITIAL_PARAMETER: a name, "*0*" or "*", "=", a charset,
	// "'", a language, "'" and EXTENDED_OTHER_VALUES.
	for _, mark := range [...]string{"*0*=", "*="} {
		if strings.HasPrefix(s[j:], mark) {
			v := j + len(mark)
			c := skipWhile(s, v, isCharsetChar)
			if c < len(s) && s[c] == '\'' {
				if l := skipWhile(s, c+1, isCharsetChar); l < len(s) && s[l] == '\'' {
					return s[a : v-1], extValueEnd(s, l+1), false, true
				}
			}
		}
	}
	// EXTENDED_OTHER_PARAMETER: a name, "*", digits not from 0, "*", "="
	// and EXTENDED_OTHER_VALUES.
	if j+1 < len(s) && '1' <= s[j+1] && s[j+1] <= '9' {
		if d := skipWhile(s, j+1, isDigit); strings.HasPrefix(s[d:], "*=") {
			return s[a : d+1], extValueEnd(s, d+2), false, true
		}
	}
	return "", 0, false, false
}

// rack2HasFileName reports whether Rack 2.2 reads a file name in a part's
// head (get_filename), which makes the part a file, or drops it when the
// name is empty: when a Content-Disposition line is wholly parameters
// (RFC2183), a filename or filename* parameter (in lower case) anywhere in
// the head (DISPPARM's matches); otherwise a Content-Disposition line with
// ";filename=" in any case (BROKEN). filename*0= (a continuation) is
// neither.
func rack2HasFileName(head string) bool {
	lastQuote := strings.LastIndexByte(head, '"')
	if !rack2RFC2183(head, lastQuote) {
		return rack2Broken(head, lastQuote)
	}
	for i := 0; ; {
		semi := strings.IndexByte(head[i:], ';')
		if semi < 0 {
			return false
		}
		semi += i
		name, end, _, ok := dispParam(head, semi, lastQuote)
		switch {
		case !ok:
			i = semi + 1
		case name == "filename" || name == "filename*":
			return true
		default:
			i = end
		}
	}
}

// condispEnd returns where Rack's CONDISP ("Content-Disposition:" in any
// case, whitespace, a TOKEN and whitespace) that starts at s[i] ends, and
// where its TOKEN starts; end is -1 when none starts there.
func condispEnd(s string, i int) (token, end int) {
	if !hasFoldPrefix(s, i, "content-disposition:") {
		return 0, -1
	}
	token = skipSpace(s, i+len("content-disposition:"))
	t := skipWhile(s, token, rackToken)
	if t == token {
		return 0, -1
	}
	return token, skipSpace(s, t)
}

// anyLineStart reports whether f holds for the index of a line's start in
// s (0, or after a '\n').
func anyLineStart(s string, f func(int) bool) bool {
	for i := 0; ; {
		if f(i) {
			return true
		}
		nl := strings.IndexByte(s[i:], '\n')
		if nl < 0 {
			return false
		}
		i += nl + 1
	}
}

// rack2RFC2183 reports whether Rack's RFC2183 matches s: at a line's
// start a CONDISP, then DISPPARMs to a line's end (or s's end).
func rack2RFC2183(s string, lastQuote int) bool {
	var tried []bool
	return anyLineStart(s, func(i int) bool {
		_, end := condispEnd(s, i)
		if end < 0 || end == len(s) || s[end] != ';' {
			return false
		}
		if tried == nil {
			tried = make([]bool, len(s))
		}
		return dispParamsReachEnd(s, end, lastQuote, tried)
	})
}

// dispParamsReachEnd reports whether DISPPARMs from s[semi] on can end at
// a line's end (before a '\n', or at s's end): each may end its trailing
// whitespace at any '\n' in it, and a quoted value at any escaped quote
// that only escaped quotes precede as well as at the first unescaped one.
// Every DISPPARM that may follow is tried, each once: tried marks their
// ';', shared by the calls on one s, as whether one reaches a line's end
// does not depend on what precedes it.
func dispParamsReachEnd(s string, semi, lastQuote int, tried []bool) bool {
	if tried[semi] {
		return false
	}
	tried[semi] = true
	pending := []int{semi}
	for len(pending) > 0 {
		semi := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		_, end, quoted, ok := dispParam(s, semi, lastQuote)
		if !ok {
			continue
		}
		if quoted { // the first quote that may end the value
			end = semi + strings.IndexByte(s[semi:], '"') + 1
			end += strings.IndexByte(s[end:], '"') + 1
		}
		for {
			w := skipSpace(s, end)
			if w == len(s) || strings.IndexByte(s[end:w], '\n') >= 0 {
				return true
			}
			if s[w] == ';' && !tried[w] {
				tried[w] = true
				pending = append(pending, w)
			}
			if !quoted || s[end-2] != '\\' {
				break
			}
			next := strings.IndexByte(s[end:], '"')
			if next < 0 {
				break
			}
			end += next + 1
		}
	}
	return false
}

// rack2Broken reports whether Rack's BROKEN matches s: at a line's start
// a CONDISP, anything but a line end, then ';', whitespace, "filename="
// (in any case) and a VALUE.
func rack2Broken(s string, lastQuote int) bool {
	return anyLineStart(s, func(i int) bool {
		token, end := condispEnd(s, i)
		if end < 0 {
			return false
		}
		// .* runs from within the TOKEN, or from within the whitespace
		// after it, across no line end: up to the end of the line that
		// whitespace ends on.
		lineEnd := len(s)
		if nl := strings.IndexByte(s[end:], '\n'); nl >= 0 {
			lineEnd = end + nl
		}
		for j := token + 1; j < lineEnd; j++ {
			if s[j] != ';' {
				continue
			}
			v := skipSpace(s, j+1)
			if hasFoldPrefix(s, v, "filename=") && rackValueEnd(s, v+len("filename="), lastQuote) >= 0 {
				return true
			}
		}
		return false
	})
}

// rack2Name returns the VALUE MULTIPART_CONTENT_DISPOSITION captures in
// s, quotes and all: after the first "Content-Disposition:" (in any case,
// anywhere) it matches after, the last ';', whitespace, "name=" (in any
// case) and VALUE before the next colon. ok is false when it matches
// nowhere.
func rack2Name(s string) (value string, ok bool) {
	const cd = "content-disposition:"
	lastQuote := strings.LastIndexByte(s, '"')
	for i := 0; ; {
		at := indexFold(s, i, cd)
		if at < 0 {
			return "", false
		}
		from := at + len(cd)
		colon := len(s)
		if c := strings.IndexByte(s[from:], ':'); c >= 0 {
			colon = from + c
		}
		for j := colon - 1; j >= from; j-- {
			if s[j] != ';' {
				continue
			}
			v := skipSpace(s, j+1)
			if !hasFoldPrefix(s, v, "name=") {
				continue
			}
			v += len("name=")
			if e := rackValueEnd(s, v, lastQuote); e >= 0 {
				return s[v:e], true
			}
		}
		i = max(at+1, colon+1-len(cd)) // the next one's colon is past this one's
	}
}

// rack2ID returns the text MULTIPART_CONTENT_ID captures in s: after its
// first "Content-ID:" (in any case, anywhere) and whitespace, up to a '\r'
// or '\n'. ok is false when s holds none.
func rack2ID(s string) (value string, ok bool) {
	i := indexFold(s, 0, "content-id:")
	if i < 0 {
		return "", false
	}
	i = skipSpace(s, i+len("content-id:"))
	if end := strings.IndexAny(s[i:], "\r\n"); end >= 0 {
		return s[i : i+end], true
	}
	return s[i:], true
}

// rack2PartName returns the name of the field Rack 2.2 reads a multipart
// part of the given head as, "" for none (a file, or a part it names
// nothing): the value after the first "Content-Disposition:" anywhere in
// the head (in any case, X-Content-Disposition's too) that a ';',
// whitespace and "name=" follow with no colon between, the last such
// name= before a colon, its quotes and backslash escapes undone (Rack's
// dequote); without one the part's Content-ID (its first
// "Content-ID:", unanchored too, after whitespace, to the line's end). A
// part with a file name (see rack2HasFileName) is a file. It takes time
// linear in the head.
func rack2PartName(head string) string {
	if rack2HasFileName(head) {
		return ""
	}
	if v, ok := rack2Name(head); ok {
		return rubyDequote(v)
	}
	v, _ := rack2ID(head)
	return v
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
	d, ok := rack3Header(head, "content-disposition:")
	if !ok || len(d) > rack3MaxDisposition {
		id, _ := rack3Header(head, "content-id:")
		return id
	}
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

// rack3Header returns the value Rack 3's MULTIPART_CONTENT_DISPOSITION
// (of "content-disposition:") or MULTIPART_CONTENT_ID (of "content-id:")
// captures in head: after the first header of the name, at a line's start
// in any case, its spaces and tabs, and a "\r\n" with spaces or tabs after
// them; up to a '\r' or '\n' that is not "\r\n" and a space or tab (a
// folded line). ok is false when head holds no such header.
func rack3Header(head, name string) (value string, ok bool) {
	ok = anyLineStart(head, func(i int) bool {
		if !hasFoldPrefix(head, i, name) {
			return false
		}
		i += len(name)
		blank := func(c byte) bool { return c == ' ' || c == '\t' }
		if j := skipWhile(head, i, blank); j > i {
			i = j
			if strings.HasPrefix(head[i:], "\r\n") && i+2 < len(head) && blank(head[i+2]) {
				i = skipWhile(head, i+2, blank)
			}
		}
		end := i
		for end < len(head) {
			if c := head[end]; c != '\r' && c != '\n' {
				end++
			} else if c == '\r' && strings.HasPrefix(head[end:], "\r\n") && end+2 < len(head) && blank(head[end+2]) {
				end += 3
			} else {
				break
			}
		}
		value = head[i:end]
		return true
	})
	return value, ok
}

// rubySpace is what Ruby's strip and lstrip remove.
const rubySpace = "\x00\t\n\v\f\r "
