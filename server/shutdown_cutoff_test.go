package server_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A POST waiting its turn in a leaky-bucket queue, its body not read yet,
// is cut off at shutdown.drain's deadline like any request: its context is
// done then, so its handler stops waiting and gives back its concurrency
// slot before Serve returns (within cutOffRoom). The http.Server watches an
// HTTP/1.1 connection for its close only once the request's body is read
// whole, so closing the connection alone would leave the handler waiting
// out its turn (4 s here) after Serve returned and the caller closed the
// store: on Redis the slot would stay held for its lease (an hour).
func TestShutdownCutsOffAQueuedPostWhoseBodyIsUnread(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Write([]byte("ok"))
	}))
	defer up.Close()
	plans := `plans:
  anonymous:
    limits:
      - {name: sockets, algorithm: concurrency, quantity: 5, window: 1h}
      - {name: queue, algorithm: leaky-bucket, quantity: 1, window: 4s, burst: 1, max_wait: 10s}
anonymous_plan: anonymous
shutdown: {drain: 1s}
`
	store, ls, cancel, done := serveOnSlowRelease(t, up.URL, plans, 10*time.Millisecond)
	base := "http://" + ls.Public.Addr().String()
	client := &http.Client{Timeout: 20 * time.Second}
	resp, err := client.Get(base + "/first") // takes the bucket's one unit
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("first request: %s", resp.Status)
	}
	go func() { // queued for about 4 s
		if r, err := client.Post(base+"/second", "text/plain", strings.NewReader("payload")); err == nil {
			io.Copy(io.Discard, r.Body)
			r.Body.Close()
		}
	}()
	time.Sleep(300 * time.Millisecond) // in the queue now
	start := time.Now()
	cancel()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("Serve did not return")
	}
	if n := store.released.Load(); n != 2 {
		t.Errorf("Serve returned after %v (drain 1s) with %d of the 2 requests' slots given back: the queued POST it cut off still holds its slot",
			time.Since(start).Round(10*time.Millisecond), n)
	}
}
