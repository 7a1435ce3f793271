package httplimit

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"io"
	"net/http"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// bodyCoding names the one content coding a key decodes a body of.
type bodyCoding int

const (
	codingNone    bodyCoding = iota // no Content-Encoding, or identity alone
	codingGzip                      // gzip or x-gzip
	codingDeflate                   // deflate: a zlib stream (RFC 1950), as HTTP's deflate is
	codingOther                     // any other coding, or more than one
)

// contentCoding returns the coding h's Content-Encoding states, over all
// its lines, in any case, identity set aside. Express's body-parser
// (inflate: true, its default) and ASP.NET Core's request decompression
// read the fields of a gzip or deflate body once decoded; a body of any
// other coding (br, zstd) or of several ("gzip, gzip", one per line) is
// one sluice does not decode. Other upstreams read a body of any coding
// as sent (see eitherReading).
func contentCoding(h http.Header) bodyCoding {
	coding := codingNone
	for _, line := range h.Values("Content-Encoding") {
		for line != "" {
			var token string
			token, line, _ = strings.Cut(line, ",")
			switch token = strings.Trim(token, " \t"); {
			case token == "" || strings.EqualFold(token, "identity"):
				continue
			case coding != codingNone:
				return codingOther
			case strings.EqualFold(token, "gzip") || strings.EqualFold(token, "x-gzip"):
				coding = codingGzip
			case strings.EqualFold(token, "deflate"):
				coding = codingDeflate
			default:
				return codingOther
			}
		}
	}
	return coding
}

// decodeBody returns body, as read for a key, decoded as h's
// Content-Encoding states (see contentCoding): as it is under no coding or
// when empty; ok false for a coding sluice does not read, a body that does
// not decode, or one whose decoded content passes MaxKeyBody, which is all
// that is decoded (a body that expands a thousandfold costs no more).
func decodeBody(h http.Header, body []byte) (decoded []byte, ok bool) {
	if len(body) == 0 {
		return body, true
	}
	switch contentCoding(h) {
	case codingNone:
		return body, true
	case codingGzip:
		return gunzip(body)
	case codingDeflate:
		return inflate(body)
	}
	return nil, false
}

// gunzip returns the content of body, one gzip member or several in a
// row, as Node's zlib (so Express) reads it: the rest after a member is
// ignored when it begins with a zero byte, which pads a stream.
func gunzip(body []byte) ([]byte, bool) {
	in := bytes.NewReader(body) // an io.ByteReader: the reader takes no byte past a member
	zr, err := gzip.NewReader(in)
	if err != nil {
		return nil, false
	}
	var out []byte
	for {
		zr.Multistream(false)
		var ok bool
		if out, ok = readDecoded(out, zr); !ok {
			return nil, false
		}
		if in.Len() == 0 || body[len(body)-in.Len()] == 0 {
			return out, true
		}
		if zr.Reset(in) != nil {
			return nil, false
		}
	}
}

// inflate returns the content of body, a zlib stream; what follows its
// checksum is ignored, as Node's zlib ignores it. A body that reads as a
// bare DEFLATE stream too, which ASP.NET Core's request decompression
// reads for deflate, is not read: the two readings may hold different
// fields.
func inflate(body []byte) ([]byte, bool) {
	zr, err := zlib.NewReader(bytes.NewReader(body))
	if err != nil {
		return nil, false
	}
	out, ok := readDecoded(nil, zr)
	if !ok || bareDeflate(body) {
		return nil, false
	}
	return out, true
}

// bareDeflate reports whether body reads as a bare DEFLATE stream (RFC
// 1951), to its end or for more than MaxKeyBody bytes of content.
func bareDeflate(body []byte) bool {
	_, err := io.Copy(io.Discard, io.LimitReader(flate.NewReader(bytes.NewReader(body)), MaxKeyBody+1))
	return err == nil
}

// readDecoded appends what r decodes, to its end, to out; false when it
// does not decode or out would pass MaxKeyBody, read no further.
func readDecoded(out []byte, r io.Reader) ([]byte, bool) {
	more, err := io.ReadAll(io.LimitReader(r, int64(MaxKeyBody+1-len(out))))
	if err != nil || len(out)+len(more) > MaxKeyBody {
		return nil, false
	}
	if out == nil {
		return more, true
	}
	return append(out, more...), true
}

// eitherReading returns the field of a body with a content coding from its
// two readings: sent, the body as sent, as an upstream that does not
// decode it reads it (Go's r.FormValue, PHP, Rack, Django and Spring for
// any coding; ASP.NET Core for one it has no provider for, as x-gzip),
// and decoded, its content, as Express and ASP.NET Core read it (see
// decodeBody). The bytes of a body as sent may hold a field its content
// does not (in a gzip header's file name, after a zlib stream, after a
// gzip member's padding). When sent holds no field of the name, the field
// is decoded's: a value, ambiguous, or absent (the rule's fallback). When
// sent holds one (a value, or ambiguous), it is the one value both read,
// or else ambiguous. A body not decoded (see content) is ambiguous.
func eitherReading(sent, decoded fieldValues) (v string, ambiguous bool) {
	switch {
	case decoded.ambiguous:
		return "", true
	case !sent.found && !sent.ambiguous:
		return decoded.value()
	case !sent.ambiguous && decoded.found && strings.EqualFold(sent.first, decoded.first):
		return decoded.first, false
	}
	return "", true
}

// mayNameMember reports whether data, a body of a JSON type that is not
// JSON, holds a string a lenient reader may take for a member named as
// path's first name, in any case: gjson and jsonparser find a member in
// what is not JSON (gjson skips what comes before an object) by a key
// read from a '"' to the next, its escapes decoded, and gjson ends a key
// at a control byte or an escape it does not decode. Without such a
// string no reader finds the field there.
func mayNameMember(data []byte, path string) bool {
	if len(data) == 0 {
		return false
	}
	first, _, _ := strings.Cut(path, ".")
	name := []byte(first)
	key := make([]byte, 0, (len(name)+1)*utf8.UTFMax)
	for {
		i := bytes.IndexByte(data, '"')
		if i < 0 {
			return false
		}
		data = data[i+1:]
		if keyMayBe(data, name, key) {
			return true
		}
	}
}

// keyMayBe reports whether the JSON string s (after its opening '"') may
// read as name to a lenient reader (see mayNameMember), decoded into key
// no further than a string equal to name in any case may reach (a
// character folds to one of up to utf8.UTFMax times its bytes).
func keyMayBe(s, name, key []byte) bool {
	key = key[:0]
	for len(s) > 0 && len(key) <= len(name)*utf8.UTFMax {
		switch c := s[0]; {
		case c == '"' || c < ' ':
			return bytes.EqualFold(key, name)
		case c != '\\':
			key, s = append(key, c), s[1:]
		default:
			r, n := jsonEscape(s)
			if n == 0 {
				return bytes.EqualFold(key, name)
			}
			key, s = utf8.AppendRune(key, r), s[n:]
		}
	}
	return len(s) == 0 && bytes.EqualFold(key, name)
}

// jsonEscape returns the character the escape s begins with stands for
// and its length; 0 for one that does not decode. A surrogate not paired
// reads as U+FFFD.
func jsonEscape(s []byte) (r rune, n int) {
	if len(s) < 2 {
		return 0, 0
	}
	switch s[1] {
	case '"', '\\', '/':
		return rune(s[1]), 2
	case 'b':
		return '\b', 2
	case 'f':
		return '\f', 2
	case 'n':
		return '\n', 2
	case 'r':
		return '\r', 2
	case 't':
		return '\t', 2
	case 'u':
		r, ok := hex4(s[2:])
		if !ok {
			return 0, 0
		}
		if utf16.IsSurrogate(r) && len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
			if r2, ok := hex4(s[8:]); ok {
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					return d, 12
				}
			}
		}
		return r, 6
	}
	return 0, 0
}

// hex4 returns the rune of the four hex digits s begins with.
func hex4(s []byte) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
