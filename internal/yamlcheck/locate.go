package yamlcheck

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// readerProblems are the messages of yaml.v3's errors of the characters of
// its input, which come with no line: the first character the reader
// refuses is found here instead.
var readerProblems = []string{
	"control characters are not allowed",
	"invalid leading UTF-8 octet",
	"incomplete UTF-8 octet sequence",
	"invalid trailing UTF-8 octet",
	"invalid length of a UTF-8 sequence",
	"invalid Unicode character",
}

// parserProblems are the messages of yaml.v3's parser's errors, whose
// line it names counting from 0 (those of its scanner count from 1).
var parserProblems = []string{
	"did not find expected <stream-start>",
	"did not find expected <document start>",
	"did not find expected node content",
	"did not find expected key",
	"did not find expected '-' indicator",
	"did not find expected ',' or ']'",
	"did not find expected ',' or '}'",
	"found duplicate %YAML directive",
	"found incompatible YAML document",
	"found duplicate %TAG directive",
	"found undefined tag handle",
}

// atItsLine corrects the line of e, a syntax error of data that yaml.v3
// reported with one as msg: for a parser's error, the line of the token it
// was found at (problemLine); for any, the last line that holds anything
// for an error past it (at the end of the stream).
func atItsLine(e *Error, data []byte, msg string) {
	if slices.Contains(parserProblems, strings.TrimPrefix(e.Msg, "YAML syntax: ")) {
		e.Line = problemLine(data, e.Line+1, msg)
	}
	if last, _ := position(data, len(bytes.TrimRight(data, " \t\r\n"))); e.Line > last {
		e.Line = last
	}
}

// problemLine returns the line of the token at which yaml.v3's parser
// refused data with msg, an error it located at line (counted from 1).
// yaml.v3 names the line where the construct the parser was in starts
// (a list, a mapping), unless that is the first line, when it names the
// token's: the text from line on, in which the construct starts on the
// first line, is read for the token's line, taken when data cut after it
// is refused with msg too; line itself when data cut after line is
// refused so (the token is there), and failing that. It costs at most
// three more reads of data, however many lines it has.
func problemLine(data []byte, line int, msg string) int {
	refusedUpTo := func(last int) bool {
		err := decodeAll(data[:lineStart(data, last+1)])
		return err != nil && err.Error() == msg
	}
	if refusedUpTo(line) {
		return line
	}
	_, problem := lineOf(msg)
	err := decodeAll(data[lineStart(data, line):])
	if err == nil {
		return line
	}
	offset, again := lineOf(err.Error())
	token := line + offset
	if again != problem || token == line || !refusedUpTo(token) {
		return line
	}
	return token
}

// lineOf splits msg, a yaml.v3 error ("yaml: line N: problem"), into its
// line (0 without one) and its problem.
func lineOf(msg string) (int, string) {
	msg = strings.TrimPrefix(msg, "yaml: ")
	var line int
	if n, _ := fmt.Sscanf(msg, "line %d:", &line); n == 1 {
		return line, strings.TrimPrefix(msg, fmt.Sprintf("line %d: ", line))
	}
	return 0, msg
}

// lineStart returns the offset in data of the start of its line (counted
// from 1), len(data) past the last, counting line breaks as position does.
func lineStart(data []byte, line int) int {
	at := 1
	for i := 0; i < len(data); {
		if at == line {
			return i
		}
		r, size := utf8.DecodeRune(data[i:])
		switch {
		case r == '\r' && i+1 < len(data) && data[i+1] == '\n':
			size, at = 2, at+1
		case r == '\n', r == '\r', r == 0x85, r == 0x2028, r == 0x2029:
			at++
		}
		i += size
	}
	return len(data)
}

// locate gives e, a syntax error of data that yaml.v3 reported with no
// line, its place: the first character YAML does not allow or the first
// byte that is not UTF-8, for an error of the input's characters; the
// alias, for an alias of no anchor; else line 1, column 1, since yaml.v3
// leaves out the line of an error only on the first line.
func locate(e *Error, data []byte) {
	e.Line, e.Col = 1, 1
	msg := strings.TrimPrefix(e.Msg, "YAML syntax: ")
	for _, p := range readerProblems {
		if msg != p {
			continue
		}
		if off, what, ok := firstBadChar(data); ok {
			e.Line, e.Col = position(data, off)
			e.Msg += " (" + what + ")"
		}
		return
	}
	var name string
	if n, _ := fmt.Sscanf(msg, "unknown anchor %s referenced", &name); n == 1 && len(name) > 2 {
		if off, ok := unknownAlias(data, strings.Trim(name, "'"), msg); ok {
			e.Line, e.Col = position(data, off)
		}
	}
}

// firstBadChar returns the offset of the first character of data that a
// YAML stream may not hold, and what it is. A stream in UTF-16 (marked by
// its byte order mark) is not looked into.
func firstBadChar(data []byte) (off int, what string, ok bool) {
	if bytes.HasPrefix(data, []byte{0xFF, 0xFE}) || bytes.HasPrefix(data, []byte{0xFE, 0xFF}) {
		return 0, "", false
	}
	for off < len(data) {
		r, size := utf8.DecodeRune(data[off:])
		if r == utf8.RuneError && size <= 1 {
			return off, fmt.Sprintf("byte 0x%02x: save the file as UTF-8", data[off]), true
		}
		if !allowed(r) {
			escape := fmt.Sprintf(`\x%02x`, r)
			if r > 0xFF {
				escape = fmt.Sprintf(`\u%04X`, r)
			}
			return off, fmt.Sprintf("U+%04X; in a double-quoted string write it as %s", r, escape), true
		}
		off += size
	}
	return 0, "", false
}

// allowed reports whether a YAML stream may hold r: YAML 1.2's c-printable,
// as yaml.v3 checks it.
func allowed(r rune) bool {
	switch {
	case r == '\t', r == '\n', r == '\r', r >= 0x20 && r <= 0x7E, r == 0x85:
		return true
	case r >= 0xA0 && r <= 0xD7FF, r >= 0xE000 && r <= 0xFFFD, r >= 0x10000 && r <= 0x10FFFF:
		return true
	}
	return false
}

// unknownAlias returns the offset of the alias *name that yaml.v3 refused
// with msg: the first place that, with the text cut right after it, is
// refused with msg too, or, for an alias written as a key, the text cut
// there with " :" after it. An occurrence in a quoted string, a comment, a
// plain scalar or a block scalar is no alias: cut there, the text reads as
// something else.
func unknownAlias(data []byte, name, msg string) (int, bool) {
	var at []int
	token := []byte("*" + name)
	for i := 0; ; {
		j := bytes.Index(data[i:], token)
		if j < 0 {
			break
		}
		end := i + j + len(token)
		if end == len(data) || !anchorChar(data[end]) {
			at = append(at, i+j)
		}
		i += j + 1
	}
	refused := func(k int) bool {
		cut := data[:at[k]+len(token)]
		for _, text := range [][]byte{cut, append(slices.Clip(cut), " :"...)} {
			if err := decodeAll(text); err != nil && strings.TrimPrefix(err.Error(), "yaml: ") == msg {
				return true
			}
		}
		return false
	}
	lo, hi := 0, len(at)
	for lo < hi {
		mid := lo + (hi-lo)/2
		if refused(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	if lo == len(at) {
		return 0, false
	}
	return at[lo], true
}

// anchorChar reports whether c may be part of an anchor's name, as yaml.v3
// reads one.
func anchorChar(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_' || c == '-'
}

// decodeAll decodes every document of data and returns the first error.
func decodeAll(data []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		if err := dec.Decode(&n); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// position returns the 1-based line and column (in characters) of the
// byte at off in data, counting line breaks as YAML does: LF, CRLF, CR,
// NEL, LS and PS.
func position(data []byte, off int) (line, col int) {
	line, col = 1, 1
	for i := 0; i < off; {
		r, size := utf8.DecodeRune(data[i:])
		switch {
		case r == '\r' && i+1 < len(data) && data[i+1] == '\n':
			col++ // the LF that follows ends the line
		case r == '\n', r == '\r', r == 0x85, r == 0x2028, r == 0x2029:
			line, col = line+1, 1
		default:
			col++
		}
		i += size
	}
	return line, col
}
