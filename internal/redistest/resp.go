package redistest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
)

// do sends one command in RESP2 on a fresh connection and reads its reply;
// when auth is not nil (a user name and a password), an AUTH goes first.
// The fixture uses it instead of a full client so that waiting for a server
// to start, or reading INFO, adds no client machinery (handshakes, pipelines,
// retries) to what a test measures.
func do(ctx context.Context, addr string, auth []string, args ...string) (any, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	var b strings.Builder
	if auth != nil {
		writeCommand(&b, append([]string{"AUTH"}, auth...))
	}
	writeCommand(&b, args)
	if _, err := io.WriteString(conn, b.String()); err != nil {
		return nil, err
	}
	r := bufio.NewReader(conn)
	if auth != nil {
		if _, err := readReply(r); err != nil {
			return nil, fmt.Errorf("AUTH: %w", err)
		}
	}
	return readReply(r)
}

// writeCommand writes args as a RESP2 array of bulk strings.
func writeCommand(b *strings.Builder, args []string) {
	fmt.Fprintf(b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(b, "$%d\r\n%s\r\n", len(a), a)
	}
}

// ReplyError is an error reply of the server, e.g. "ERR unknown command".
type ReplyError string

func (e ReplyError) Error() string { return string(e) }

func readReply(r *bufio.Reader) (any, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return nil, errors.New("empty reply line")
	}
	body := line[1:]
	switch line[0] {
	case '+':
		return body, nil
	case '-':
		return nil, ReplyError(body)
	case ':':
		return strconv.ParseInt(body, 10, 64)
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return nil, err
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return nil, err
		}
		out := make([]any, n)
		for i := range out {
			if out[i], err = readReply(r); err != nil {
				var re ReplyError
				if !errors.As(err, &re) {
					return nil, err
				}
				out[i] = re
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("unexpected reply %q", line)
}
