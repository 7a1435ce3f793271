package httplimit

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"io"
	"net/http"
	"strings"
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
// one sluice does not read.
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
