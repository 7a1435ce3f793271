package server_test

import (
	"bufio"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/server"
)

// A request asking to switch to a protocol whose name is not printable
// ASCII (here a tab, then 30 KB) is refused by the reverse proxy before
// the upstream is asked, with an error quoting the whole Upgrade value.
// That is the client's mistake: a 400 with a problem body, the upstream
// not reached, and no "upstream failed" line repeating the value (any
// client, with no credential, could make lines of up to max_header_bytes
// ten times a second).
func TestAnUpgradeToAnInvalidProtocolIsTheClientsBadRequest(t *testing.T) {
	var logs realtest.Buffer
	f := newFixtureWith(t, `
plans:
  free: {limits: [{name: per-minute, algorithm: fixed-window, quantity: 1000, window: 1m}]}
default_plan: free
anonymous_plan: free
`, func(o *server.Options) {
		o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	l := serveOn(t, f.srv)
	c, err := net.Dial("tcp", l.public)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	upgrade := "web\tsocket" + strings.Repeat("A", 30000)
	io.WriteString(c, "GET /ws HTTP/1.1\r\nHost: "+l.public+"\r\nConnection: Upgrade\r\nUpgrade: "+upgrade+"\r\n\r\n")
	r, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodGet})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var p struct {
		Status int    `json:"status"`
		Detail string `json:"detail"`
	}
	if err := json.NewDecoder(r.Body).Decode(&p); err != nil || r.StatusCode != http.StatusBadRequest || p.Status != http.StatusBadRequest {
		t.Errorf("an Upgrade to an invalid protocol: %d %+v (%v), want 400 with a problem body", r.StatusCode, p, err)
	}
	if n := f.hits.Load(); n != 0 {
		t.Errorf("the upstream got %d requests, want none", n)
	}
	if strings.Contains(logs.String(), `msg="upstream failed"`) {
		t.Errorf("the client's invalid Upgrade was logged as an upstream failure: %.300s", logs.String())
	}
	for line := range strings.Lines(logs.String()) {
		if len(line) > 2048 {
			t.Errorf("a request's Upgrade header made a log line of %d bytes: %.200s…", len(line), line)
		}
	}
}

// The error of an "upstream failed" line may quote what the client sent:
// an upstream that answers a long Upgrade by switching to another protocol
// fails the request with an error quoting both. The line is cut as its
// path is, within TestUpstreamFailureLinesAreBounded's 2 KiB.
func TestUpstreamFailureErrorsAreCut(t *testing.T) {
	var logs realtest.Buffer
	other := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: other\r\n\r\n")
	})
	f := (&fixture{}).start(t, `
plans:
  free: {limits: [{name: per-minute, algorithm: fixed-window, quantity: 1000, window: 1m}]}
default_plan: free
anonymous_plan: free
`, other, func(o *server.Options) {
		o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	l := serveOn(t, f.srv)
	c, err := net.Dial("tcp", l.public)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "GET /ws HTTP/1.1\r\nHost: "+l.public+"\r\nConnection: Upgrade\r\nUpgrade: websocket"+strings.Repeat("A", 30000)+"\r\n\r\n")
	r, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodGet})
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusBadGateway || !strings.Contains(logs.String(), `msg="upstream failed"`) {
		t.Fatalf("an upstream switching to another protocol: %d, want 502 and an upstream failed line: %.300s", r.StatusCode, logs.String())
	}
	for line := range strings.Lines(logs.String()) {
		if len(line) > 2048 {
			t.Errorf("a request's Upgrade header made a log line of %d bytes: %.200s…", len(line), line)
		}
	}
}
