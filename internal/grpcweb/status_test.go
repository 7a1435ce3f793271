package grpcweb

import (
	"encoding/base64"
	"encoding/binary"
	"strings"
	"testing"
)

// frame is one gRPC-Web frame of flag and payload.
func frame(flag byte, payload string) []byte {
	b := make([]byte, 5, 5+len(payload))
	b[0] = flag
	binary.BigEndian.PutUint32(b[1:], uint32(len(payload)))
	return append(b, payload...)
}

// body is a message frame, then the trailer frame of trailer.
func body(trailer string) []byte {
	return append(frame(0, "\x0a\x03abc"), frame(0x80, trailer)...)
}

// codeOf writes b to a Status of contentType in pieces of step bytes.
func codeOf(t *testing.T, contentType string, b []byte, step int) (uint32, bool) {
	t.Helper()
	var s Status
	if !s.Reset(contentType) {
		t.Fatalf("%s: not gRPC-Web", contentType)
	}
	for len(b) > 0 {
		k := min(step, len(b))
		if n, err := s.Write(b[:k]); n != k || err != nil {
			t.Fatalf("Write: %d, %v", n, err)
		}
		b = b[k:]
	}
	return s.Code()
}

func TestStatusReadsTheTrailerFrame(t *testing.T) {
	b := body("grpc-status: 5\r\ngrpc-message: not found\r\n")
	text := []byte(base64.StdEncoding.EncodeToString(b))
	// Each frame its own padded chunk, as a server flushing frame by frame
	// sends them.
	chunked := []byte(base64.StdEncoding.EncodeToString(frame(0, "\x0a\x01a")) +
		base64.StdEncoding.EncodeToString(frame(0x80, "Grpc-Status:13\r\n")))
	for _, tc := range []struct {
		name, ct string
		body     []byte
		want     uint32
		ok       bool
	}{
		{"binary", "application/grpc-web+proto", b, 5, true},
		{"binary, no subtype", "application/grpc-web", b, 5, true},
		{"text", "application/grpc-web-text", text, 5, true},
		{"text, chunks padded", "application/grpc-web-text+proto; charset=utf-8", chunked, 13, true},
		{"no trailer", "application/grpc-web", frame(0, "abc"), 0, false},
		{"trailer without status", "application/grpc-web", frame(0x80, "grpc-message: x\r\n"), 0, false},
		{"bad status", "application/grpc-web", frame(0x80, "grpc-status: x\r\n"), 0, false},
		{"empty trailer", "application/grpc-web", frame(0x80, ""), 0, false},
	} {
		for _, step := range []int{1, 2, 3, 5, 7, 1 << 20} {
			if code, ok := codeOf(t, tc.ct, tc.body, step); code != tc.want || ok != tc.ok {
				t.Errorf("%s in pieces of %d: %d, %v; want %d, %v", tc.name, step, code, ok, tc.want, tc.ok)
			}
		}
	}
}

func TestStatusWatchesGRPCWebOnly(t *testing.T) {
	var s Status
	for _, ct := range []string{"application/grpc", "application/json", "", "application/grpc-webx"} {
		if s.Reset(ct) {
			t.Errorf("%q taken for gRPC-Web", ct)
		}
		s.Write(body("grpc-status: 5\r\n"))
		if _, ok := s.Code(); ok {
			t.Errorf("%q: a status read", ct)
		}
	}
	// A trailer longer than MaxTrailer: its status is read from the start.
	long := "grpc-status: 7\r\ngrpc-message: " + string(make([]byte, 2*MaxTrailer)) + "\r\n"
	if code, ok := codeOf(t, "application/grpc-web", body(long), 4096); code != 7 || !ok {
		t.Errorf("long trailer: %d, %v", code, ok)
	}
}

// FuzzStatus: any body, in any pieces, never fails a write, and reads the
// same status whole, in pieces and as base64 text.
func FuzzStatus(f *testing.F) {
	f.Add(body("grpc-status: 5\r\n"), uint8(3))
	f.Add(frame(0x80, "grpc-status:0"), uint8(1))
	f.Add([]byte{0x80, 0xff, 0xff, 0xff, 0xff}, uint8(2))
	f.Fuzz(func(t *testing.T, b []byte, step uint8) {
		whole, wok := codeOf(t, "application/grpc-web", b, len(b)+1)
		pieces, pok := codeOf(t, "application/grpc-web", b, int(step)+1)
		text, tok := codeOf(t, "application/grpc-web-text", []byte(base64.StdEncoding.EncodeToString(b)), int(step)+1)
		if whole != pieces || wok != pok || whole != text || wok != tok {
			t.Fatalf("whole %d %v, pieces of %d %d %v, text %d %v", whole, wok, int(step)+1, pieces, pok, text, tok)
		}
	})
}

func TestMedia(t *testing.T) {
	for ct, want := range map[string][2]string{
		"application/grpc-web+proto; charset=utf-8": {"application/grpc-web+proto", "application/grpc-web"},
		" Application/GRPC ":                        {"application/grpc", "application/grpc"},
		"application/grpc-web-text":                 {"application/grpc-web-text", "application/grpc-web-text"},
		"":                                          {"", ""},
	} {
		if media, base := Media(ct); media != want[0] || base != want[1] {
			t.Errorf("Media(%q) = %q, %q; want %q, %q", ct, media, base, want[0], want[1])
		}
	}
}

// TestStatusAfterALongTrailerLine: the status is read wherever its line is
// in the trailer, after lines of any length — as gRPC-Web servers that
// write their trailers in sorted order send a long grpc-message before it.
func TestStatusAfterALongTrailerLine(t *testing.T) {
	long := "Grpc-Message: " + strings.Repeat("%20", 3*MaxTrailer) + "\r\n"
	for _, trailer := range []string{
		long + "Grpc-Status: 13\r\n",
		long + long + "Grpc-Status: 13",
		"Content-Type: application/grpc-web\r\n" + long + "Grpc-Status: 13\r\nX-Trace: " + strings.Repeat("a", 2*MaxTrailer) + "\r\n",
	} {
		b := body(trailer)
		text := []byte(base64.StdEncoding.EncodeToString(b))
		for _, step := range []int{1, 7, 4096, 1 << 20} {
			if code, ok := codeOf(t, "application/grpc-web", b, step); code != 13 || !ok {
				t.Errorf("binary in pieces of %d: %d, %v; want 13, true", step, code, ok)
			}
			if code, ok := codeOf(t, "application/grpc-web-text", text, step); code != 13 || !ok {
				t.Errorf("text in pieces of %d: %d, %v; want 13, true", step, code, ok)
			}
		}
	}
}
