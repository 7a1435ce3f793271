package client_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/client"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// An upgraded connection (a WebSocket behind sluice's middleware or
// proxy) holds its concurrency slot at the server until it closes: the
// handler that serves it has not returned. So the Transport counts the
// request of a 101 answer in flight until its body, the connection, is
// closed, and with one slot and a WebSocket open holds the next request
// rather than sending it into the server's 429. The upgrade request's
// context ending changes nothing: net/http leaves the connection open to
// its caller, and the server still serves it.
func TestAnUpgradedConnectionHoldsItsConcurrencySlot(t *testing.T) {
	store := memory.New()
	defer store.Close()
	m, err := httplimit.New(sluice.NewLimiter(store), httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.Concurrency(1, time.Minute)}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	srv := httptest.NewServer(m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") == "" {
			return
		}
		header := w.Header().Clone() // the middleware's RateLimit fields
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n")
		header.Write(brw)
		brw.WriteString("\r\n")
		brw.Flush()
		io.Copy(io.Discard, brw) // served until the client closes it
		close(closed)
	})))
	defer srv.Close()

	hc := &http.Client{Transport: &client.Transport{}}
	get := func(ctx context.Context, upgrade bool) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		if upgrade {
			req.Header.Set("Connection", "Upgrade")
			req.Header.Set("Upgrade", "echo")
		}
		return hc.Do(req)
	}
	resp, err := get(context.Background(), false) // the probe: learns the quota of one slot
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	wsCtx, wsCancel := context.WithCancel(context.Background())
	ws, err := get(wsCtx, true)
	if err != nil || ws.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v %v", ws, err)
	}
	if ws.Header.Get("RateLimit") == "" {
		t.Fatalf("the 101 answer carries no RateLimit field: %v", ws.Header)
	}
	defer func() { ws.Body.Close(); <-closed }()
	wsCancel()

	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	resp, err = get(ctx, false)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("a request while the WebSocket holds the only slot was sent and answered %d; want it held by the Transport", resp.StatusCode)
	}
	if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, client.ErrWaitTooLong) {
		t.Errorf("held request: %v", err)
	}
}

// Closing an upgraded connection ends its request: the slot it held is
// back, and the next request goes out. Closed twice, it gives back one
// slot, as a body does.
func TestClosingAnUpgradedConnectionGivesItsSlotBackOnce(t *testing.T) {
	var peers []net.Conn
	defer func() {
		for _, c := range peers {
			c.Close()
		}
	}()
	answer := func(r *http.Request) (*http.Response, error) {
		h := http.Header{}
		h.Set("RateLimit-Policy", `"in-flight";q=1;qu="concurrent-requests"`)
		h.Set("RateLimit", `"in-flight";r=0`)
		if r.Header.Get("Upgrade") == "" {
			return &http.Response{StatusCode: http.StatusOK, Header: h, Body: io.NopCloser(strings.NewReader("answer")), Request: r}, nil
		}
		conn, peer := net.Pipe()
		peers = append(peers, peer)
		return &http.Response{StatusCode: http.StatusSwitchingProtocols, Header: h, Body: conn, Request: r}, nil
	}
	tr := &client.Transport{Base: roundTripFunc(answer)}
	send := func(what string, upgrade bool) (*http.Response, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.example/", nil)
		if upgrade {
			req.Header.Set("Connection", "Upgrade")
			req.Header.Set("Upgrade", "echo")
		}
		resp, err := tr.RoundTrip(req)
		if err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, client.ErrWaitTooLong) {
			t.Fatalf("%s: %v", what, err)
		}
		return resp, err
	}
	held := func(what string) {
		t.Helper()
		if resp, err := send(what, false); err == nil {
			resp.Body.Close()
			t.Fatalf("%s: sent; want it held, the only slot being taken", what)
		}
	}

	ws, err := send("upgrade", true)
	if err != nil {
		t.Fatal(err)
	}
	conn, ok := ws.Body.(io.ReadWriteCloser)
	if !ok {
		t.Fatalf("101 response body is %T, not an io.ReadWriteCloser as net/http documents", ws.Body)
	}
	held("a request while the connection is open")
	conn.Close()
	conn.Close()
	next, err := send("a request once the connection is closed", false)
	if err != nil {
		t.Fatalf("a request once the connection is closed: %v; want it sent", err)
	}
	defer next.Body.Close()
	held("a request while that one's body is open")
}
