package grpcweb

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"strconv"
	"strings"
	"testing"
)

// referenceCode reads the status of a whole gRPC-Web body as PROTOCOL-WEB.md
// lays it out, frame by frame: the first frame with flag bit 0x80, complete,
// holds the trailers as HTTP/1 header lines; its first grpc-status line of
// at most MaxTrailer bytes (Status's documented bound) holds a code.
func referenceCode(body []byte) (uint32, bool) {
	for len(body) >= 5 {
		n := binary.BigEndian.Uint32(body[1:5])
		if uint64(len(body)-5) < uint64(n) {
			return 0, false
		}
		payload := body[5 : 5+n]
		if body[0]&0x80 == 0 {
			body = body[5+n:]
			continue
		}
		for line := range bytes.SplitSeq(payload, []byte("\n")) {
			if len(line) > MaxTrailer {
				continue
			}
			name, value, ok := strings.Cut(strings.TrimRight(string(line), "\r"), ":")
			if !ok || !strings.EqualFold(strings.TrimSpace(name), "grpc-status") {
				continue
			}
			code, err := strconv.ParseUint(strings.TrimSpace(value), 10, 32)
			if err != nil {
				return 0, false
			}
			return uint32(code), true
		}
		return 0, false
	}
	return 0, false
}

// textChunks is b as application/grpc-web-text sends it when flushed at
// each of cuts: every chunk base64 with its own padding, lines broken
// where crlf says.
func textChunks(b []byte, cuts []byte, crlf bool) []byte {
	var out []byte
	for _, c := range cuts {
		k := min(int(c), len(b))
		out = base64.StdEncoding.AppendEncode(out, b[:k])
		if crlf {
			out = append(out, "\r\n"...)
		}
		b = b[k:]
	}
	return base64.StdEncoding.AppendEncode(out, b)
}

// FuzzStatusReadsAsTheWireFormat: whatever the body, in whatever pieces,
// binary or as base64 text chunked and padded anywhere, Status reads the
// status the whole body holds by the wire format.
func FuzzStatusReadsAsTheWireFormat(f *testing.F) {
	f.Add(body("grpc-status: 5\r\ngrpc-message: x\r\n"), uint8(3), []byte{1, 7}, false)
	f.Add(append(frame(0x81, "Grpc-Status:\t13 \r\n"), frame(0x80, "grpc-status: 1")...), uint8(1), []byte{5}, true)
	f.Add(frame(0x80, "grpc-message: "+strings.Repeat("m", MaxTrailer)+"\r\ngrpc-status: 4\r\n"), uint8(200), []byte{0, 2}, false)
	f.Add(frame(0x80, "grpc-status: "+strings.Repeat(" ", MaxTrailer)+"4\r\ngrpc-status: 2"), uint8(0), []byte(nil), false)
	f.Add(append(frame(0, ""), frame(0x80, "grpc-status: 99999999999\r\ngrpc-status: 3")...), uint8(9), []byte{4}, true)
	f.Add([]byte{0x80, 0, 0, 0, 9, 'g'}, uint8(2), []byte(nil), false)
	f.Fuzz(func(t *testing.T, b []byte, step uint8, cuts []byte, crlf bool) {
		want, wok := referenceCode(b)
		if code, ok := codeOf(t, "application/grpc-web", b, int(step)+1); code != want || ok != wok {
			t.Fatalf("binary in pieces of %d: %d, %v; the wire format %d, %v", int(step)+1, code, ok, want, wok)
		}
		text := textChunks(b, cuts, crlf)
		if code, ok := codeOf(t, "application/grpc-web-text", text, int(step)+1); code != want || ok != wok {
			t.Fatalf("text %q in pieces of %d: %d, %v; the wire format %d, %v", text, int(step)+1, code, ok, want, wok)
		}
	})
}

// TestStatusEdges: the edges of the wire format read as referenceCode
// reads them.
func TestStatusEdges(t *testing.T) {
	for _, b := range [][]byte{
		frame(0x80, "grpc-status: 0"),
		frame(0x80, "grpc-status:0\r\n"),
		frame(0x80, "GRPC-STATUS : 16\r\n"),
		frame(0x80, "grpc-status: 4294967295\r\n"),
		frame(0x80, "grpc-status: 4294967296\r\n"),
		frame(0x80, "grpc-status: -1\r\n"),
		frame(0x80, "grpc-status: +1\r\n"),
		frame(0x80, "grpc-status: 1 2\r\n"),
		frame(0x80, "grpc-status: \r\n"),
		frame(0x80, "grpc-status\r\n"),
		frame(0x80, "x-grpc-status: 3\r\ngrpc-status: 4\r\n"),
		frame(0x80, "grpc-status: 3\r\ngrpc-status: 4\r\n"),
		frame(0x80, "grpc-status: 3\ngrpc-message: bare LF\n"),
		frame(0x80, "grpc-message: a:b\r\ngrpc-status: 12\r\n"),
		frame(0x80, "grpc-status: "+strings.Repeat("0", MaxTrailer)+"7\r\ngrpc-status: 8\r\n"),
		frame(0x80, strings.Repeat("x", MaxTrailer-1)+"\r\ngrpc-status: 9"),
		frame(0x81, "grpc-status: 6\r\n"),
		frame(0xff, "grpc-status: 6\r\n"),
		append(frame(0x80, "grpc-status: 1\r\n"), frame(0x80, "grpc-status: 2\r\n")...),
		append(frame(0x01, "grpc-status: 1\r\n"), frame(0x80, "grpc-status: 2\r\n")...),
		append(frame(0x80, ""), frame(0x80, "grpc-status: 2\r\n")...),
		frame(0x80, "grpc-status: 5\r\n")[:10],
		[]byte{0x80, 0, 0, 0},
		{},
	} {
		want, wok := referenceCode(b)
		for _, step := range []int{1, 3, 4096, 1 << 20} {
			if code, ok := codeOf(t, "application/grpc-web", b, step); code != want || ok != wok {
				t.Errorf("%.60q in pieces of %d: %d, %v; the wire format %d, %v", b, step, code, ok, want, wok)
			}
			text := textChunks(b, []byte{1, 2, 5}, true)
			if code, ok := codeOf(t, "application/grpc-web-text", text, step); code != want || ok != wok {
				t.Errorf("text %.60q in pieces of %d: %d, %v; the wire format %d, %v", text, step, code, ok, want, wok)
			}
		}
	}
}
