package migrate_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// okUpstream is an upstream that answers every request 200 "ok".
func okUpstream(t *testing.T) *httptest.Server {
	t.Helper()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	t.Cleanup(up.Close)
	return up
}

// clientFrom is a client whose connections leave from 127.0.0.from,
// keeping them alive between requests unless keepAlive is false.
func clientFrom(from byte, keepAlive bool) *http.Client {
	local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, from)}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DisableKeepAlives:   !keepAlive,
		MaxIdleConnsPerHost: 64,
		DialContext:         (&net.Dialer{LocalAddr: local}).DialContext,
	}}
}

// status sends GET url with c and returns the status (0 after an error,
// which fails the test).
func status(t *testing.T, c *http.Client, url string) int {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Error(err)
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// heldUpstream answers "ok", holding each request to /slow/ until the
// requests held are released.
type heldUpstream struct {
	*httptest.Server
	mu      sync.Mutex
	gate    chan struct{}
	arrived chan struct{}
}

func newHeldUpstream(t *testing.T) *heldUpstream {
	u := &heldUpstream{gate: make(chan struct{}), arrived: make(chan struct{}, 16)}
	close(u.gate)
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/slow/") {
			u.mu.Lock()
			g, arrived := u.gate, u.arrived
			u.mu.Unlock()
			arrived <- struct{}{}
			<-g
		}
		io.WriteString(w, "ok")
	}))
	t.Cleanup(u.Close)
	return u
}

// withTwoHeld sends two GET /slow/a to base with c, waits until the
// upstream holds both, runs during, releases them and returns their
// statuses.
func (u *heldUpstream) withTwoHeld(t *testing.T, name string, c *http.Client, base string, during func()) (first, second int) {
	t.Helper()
	u.mu.Lock()
	u.gate, u.arrived = make(chan struct{}), make(chan struct{}, 16)
	gate, arrived := u.gate, u.arrived
	u.mu.Unlock()
	held := make(chan int, 2)
	for range 2 {
		go func() { held <- status(t, c, base+"/slow/a") }()
	}
	for range 2 {
		select {
		case <-arrived:
		case <-time.After(10 * time.Second):
			close(gate)
			t.Fatalf("%s: the two held requests never reached the upstream", name)
		}
	}
	during()
	close(gate)
	return <-held, <-held
}
