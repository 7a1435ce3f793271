package server_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// queueConfig is a leaky-bucket queue that admits one request at once and
// the next after about 2s (max_wait 3s), behind a write_timeout of 1s.
const queueConfig = `
connections: {read_timeout: 1s, write_timeout: 1s, stream_idle_timeout: 800ms}
plans:
  anonymous:
    limits: [{name: queue, algorithm: leaky-bucket, quantity: 1, window: 2s, burst: 1, max_wait: 3s}]
anonymous_plan: anonymous
`

// TestAQueuedRequestIsAnsweredPastWriteTimeout: a request a leaky-bucket
// queue admits with a delay waits its turn and gets the upstream's answer,
// though the delay is longer than write_timeout: the queue's wait does not
// count against it, over HTTP/1.1 as over HTTP/2 (whose server arms it per
// stream as the stream opens and resets the stream when it passes).
func TestAQueuedRequestIsAnsweredPastWriteTimeout(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok"))
	}))
	t.Cleanup(up.Close)
	for _, tc := range []struct {
		name   string
		client func(t *testing.T) *http.Client
	}{
		{"HTTP/1.1", func(*testing.T) *http.Client { return &http.Client{Timeout: 10 * time.Second} }},
		{"HTTP/2", h2cClient},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := loadServer(t, t.TempDir(), "upstream: "+up.URL+queueConfig)
			addrs := serveOn(t, srv)
			client := tc.client(t)
			for i := range 2 {
				start := time.Now()
				resp, err := client.Get("http://" + addrs.public + "/q")
				if err != nil {
					t.Fatalf("request %d (the second queued ~2s, write_timeout 1s): error after %v: %v; want the upstream's 200",
						i+1, time.Since(start).Round(100*time.Millisecond), err)
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK || string(b) != "ok" {
					t.Fatalf("request %d: %s %q (%v) after %v; want the upstream's 200 ok", i+1, resp.Status, b, err, time.Since(start).Round(100*time.Millisecond))
				}
			}
		})
	}
}

// TestForwardAuthAnswersAQueuedRequestPastWriteTimeout: forward-auth
// answers a request a leaky-bucket queue admits with a delay 200 once the
// delay has passed, though it is longer than write_timeout: the queue's
// wait does not count against it (a connection closed without an answer
// is an auth failure to the front proxy, nginx's 500, for a request
// admitted and charged).
func TestForwardAuthAnswersAQueuedRequestPastWriteTimeout(t *testing.T) {
	srv, _ := loadServer(t, t.TempDir(), queueConfig+testAdmin)
	addrs := serveOn(t, srv)
	client := &http.Client{Timeout: 10 * time.Second}
	for i := range 2 {
		req, _ := http.NewRequest("GET", "http://"+addrs.admin+"/v1/forward-auth", nil)
		req.Header.Set("Sluice-Token", testToken)
		req.Header.Set("X-Forwarded-Method", "GET")
		req.Header.Set("X-Forwarded-Uri", "/api/items")
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("forward-auth request %d (the second queued ~2s, write_timeout 1s): error after %v: %v; want 200",
				i+1, time.Since(start).Round(100*time.Millisecond), err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("forward-auth request %d: %s after %v; want 200", i+1, resp.Status, time.Since(start).Round(100*time.Millisecond))
		}
		if i == 1 && time.Since(start) < time.Second {
			t.Fatalf("forward-auth request 2 answered after %v; want it held for its turn in the queue (~2s)", time.Since(start))
		}
	}
}
