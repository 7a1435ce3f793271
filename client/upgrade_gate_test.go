package client_test

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/client"
)

// A 101 Switching Protocols answer's body is the connection, an
// io.ReadWriteCloser as net/http documents; with a Gate that holds units
// until the body closes (a LeaseGate, as every LimiterGate is), it stays
// one.
func TestUpgradeBodyStaysWritableWithAGate(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
		brw.Flush()
		line, _ := bufio.NewReader(brw).ReadString('\n')
		conn.Write([]byte(line))
	}))
	defer srv.Close()

	for _, tc := range []struct {
		name string
		gate client.Gate
	}{
		{"no gate", nil},
		{"local gate", client.NewLocalGate(sluice.TokenBucket(100, time.Second))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hc := &http.Client{Transport: &client.Transport{Gate: tc.gate}}
			req, _ := http.NewRequest("GET", srv.URL, nil)
			req.Header.Set("Connection", "Upgrade")
			req.Header.Set("Upgrade", "echo")
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusSwitchingProtocols {
				t.Fatalf("status %d", resp.StatusCode)
			}
			rwc, ok := resp.Body.(io.ReadWriteCloser)
			if !ok {
				t.Fatalf("101 response body is %T, not an io.ReadWriteCloser as net/http documents", resp.Body)
			}
			rwc.Write([]byte("hi\n"))
			got, _ := bufio.NewReader(rwc).ReadString('\n')
			if got != "hi\n" {
				t.Fatalf("echo %q", got)
			}
		})
	}
}
