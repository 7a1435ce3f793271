package httplimit_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// TestACountedRequestMayHijackItsConnection: a handler behind a limit that
// counts by the answer gets a writer that is an http.Hijacker where the
// server's is, as WebSocket libraries that assert it (w.(http.Hijacker))
// need: counting by the answer must not break an upgrade that works
// without it. A hijacked request is answered (a success).
func TestACountedRequestMayHijackItsConnection(t *testing.T) {
	mw, _ := clockedMiddleware(t, httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute).Named("fails")}}},
		Count: map[string]string{"fails": httplimit.CountFailures},
	})
	// The hijacked answer reaches the client before the handler returns
	// and the request is settled: each request waits for the one before
	// to have ended.
	ended := make(chan struct{}, 1)
	limited := mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hj, ok := w.(http.Hijacker)
		if !ok {
			http.Error(w, "not a Hijacker", http.StatusInternalServerError)
			return
		}
		conn, buf, err := hj.Hijack()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		defer conn.Close()
		buf.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 8\r\nConnection: close\r\n\r\nhijacked")
		buf.Flush()
	}))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		limited.ServeHTTP(w, r)
		ended <- struct{}{}
	}))
	defer srv.Close()
	for i := range 3 { // a limit of 1 failure: the hijacked requests are not failures
		resp, err := http.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(body) != "hijacked" {
			t.Fatalf("request %d: %d %q", i, resp.StatusCode, body)
		}
		<-ended
	}
}
