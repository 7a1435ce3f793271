// Package grpcweb reads the status a gRPC-Web answer sends at the end of
// its body, for the limits that count by response and the degradation error
// rate. It is written here rather than taken from a gRPC-Web library
// because it only watches a body being passed on: it keeps no message and
// at most one trailer line of MaxTrailer bytes, and never blocks or fails
// the answer.
// It also tells a request of the Connect protocol, gRPC's sibling over
// plain HTTP, by its header (Connect).
//
// The format (gRPC's PROTOCOL-WEB.md): the body is a sequence of frames,
// each a flag byte, a 4-byte big-endian length and that many bytes; the
// frame whose flag has bit 0x80 set carries the trailers as HTTP/1 header
// lines ("grpc-status: 0\r\n"). application/grpc-web-text sends the same
// bytes in base64, each chunk possibly padded on its own.
package grpcweb

import (
	"bytes"
	"encoding/base64"
	"strconv"
	"strings"
)

// MaxTrailer is the longest trailer line a Status reads, in bytes; longer
// lines (a long grpc-message) are passed over, and a status on any later
// line is still read.
const MaxTrailer = 4096

// Status watches one gRPC-Web answer's body for its status. The zero Status
// watches nothing; Reset starts it on an answer.
type Status struct {
	on, text bool
	group    [4]byte // base64 characters not yet decoded
	ng       int
	head     [5]byte // the current frame's header as read so far
	nh       int
	left     uint32 // bytes of the current frame's payload still to come
	trailer  bool   // the current frame is the trailer frame
	buf      []byte // the trailer line being read, up to MaxTrailer
	long     bool   // the trailer line being read is longer than MaxTrailer
	found    bool   // a grpc-status line has been read
	code     uint32 // its code
	valid    bool   // its code is a number
	done     bool   // the trailer frame has ended
}

// Reset starts s on an answer whose Content-Type is contentType and reports
// whether it is a gRPC-Web answer, which s then watches; for any other, s
// watches nothing.
func (s *Status) Reset(contentType string) bool {
	buf := s.buf[:0]
	*s = Status{buf: buf}
	switch _, base := Media(contentType); base {
	case "application/grpc-web":
		s.on = true
	case "application/grpc-web-text":
		s.on, s.text = true, true
	}
	return s.on
}

// Media returns contentType's media type, in lower case and without its
// parameters, and its base: the media type without a "+" suffix
// ("application/grpc-web+proto; charset=utf-8" gives
// "application/grpc-web+proto" and "application/grpc-web").
func Media(contentType string) (media, base string) {
	media, _, _ = strings.Cut(contentType, ";")
	media = strings.ToLower(strings.TrimSpace(media))
	base, _, _ = strings.Cut(media, "+")
	return media, base
}

// Write reads p, the next bytes of the body. It never fails.
func (s *Status) Write(p []byte) (int, error) {
	if !s.on || s.done {
		return len(p), nil
	}
	if !s.text {
		s.frames(p)
		return len(p), nil
	}
	var out [3]byte
	for _, c := range p {
		if c == '\r' || c == '\n' {
			continue
		}
		s.group[s.ng] = c
		if s.ng++; s.ng < 4 {
			continue
		}
		s.ng = 0
		n, err := base64.StdEncoding.Decode(out[:], s.group[:])
		if err != nil {
			s.on = false // not base64: no status to read
			break
		}
		s.frames(out[:n])
	}
	return len(p), nil
}

// frames reads b, the next bytes of the frames.
func (s *Status) frames(b []byte) {
	for len(b) > 0 && !s.done {
		if s.nh < len(s.head) {
			k := copy(s.head[s.nh:], b)
			s.nh += k
			b = b[k:]
			if s.nh < len(s.head) {
				return
			}
			s.left = uint32(s.head[1])<<24 | uint32(s.head[2])<<16 | uint32(s.head[3])<<8 | uint32(s.head[4])
			s.trailer = s.head[0]&0x80 != 0
			if s.left == 0 {
				s.endFrame()
			}
			continue
		}
		k := min(uint32(len(b)), s.left)
		if s.trailer {
			s.lines(b[:k])
		}
		s.left -= k
		b = b[k:]
		if s.left == 0 {
			s.endFrame()
		}
	}
}

// endFrame ends the current frame.
func (s *Status) endFrame() {
	s.nh = 0
	if s.trailer {
		s.endLine()
		s.done = true
	}
}

// lines reads b, the next bytes of the trailer frame's payload, line by
// line.
func (s *Status) lines(b []byte) {
	for len(b) > 0 {
		part, rest, eol := bytes.Cut(b, []byte{'\n'})
		switch {
		case s.long:
		case len(s.buf)+len(part) > MaxTrailer:
			s.long, s.buf = true, s.buf[:0]
		default:
			s.buf = append(s.buf, part...)
		}
		if !eol {
			return
		}
		s.endLine()
		b = rest
	}
}

// endLine reads the trailer line in s.buf: the first grpc-status line
// decides the status.
func (s *Status) endLine() {
	line, long := s.buf, s.long
	s.buf, s.long = s.buf[:0], false
	if long || s.found {
		return
	}
	name, value, ok := bytes.Cut(bytes.TrimRight(line, "\r"), []byte{':'})
	if !ok || !strings.EqualFold(string(bytes.TrimSpace(name)), "grpc-status") {
		return
	}
	c, err := strconv.ParseUint(string(bytes.TrimSpace(value)), 10, 32)
	s.found, s.code, s.valid = true, uint32(c), err == nil
}

// Code returns the grpc-status of the answer's trailer frame, and false
// until a trailer frame whose first grpc-status line holds a valid code has
// been read.
func (s *Status) Code() (code uint32, ok bool) {
	if !s.done || !s.valid {
		return 0, false
	}
	return s.code, true
}
