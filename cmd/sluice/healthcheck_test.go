package main

import (
	"bytes"
	"context"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sluice healthcheck succeeds on a 2xx answer only: a 503 (a server
// shutting down), a redirect, a refused connection or an answer slower
// than -timeout each exit 1 with one line naming the URL and why.
func TestHealthcheckSucceedsOn2xxOnly(t *testing.T) {
	slow := make(chan struct{})
	t.Cleanup(func() { close(slow) })
	mux := http.NewServeMux()
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ready\n")) })
	mux.HandleFunc("/draining", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
	})
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/readyz", http.StatusFound) })
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-slow:
		case <-r.Context().Done():
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + closed.Addr().String() + "/readyz"
	closed.Close()

	for _, tc := range []struct {
		args     []string
		code     int
		want     string
		maxTaken time.Duration
	}{
		{[]string{srv.URL + "/readyz"}, 0, "200 OK: ready", time.Second},
		{[]string{srv.URL + "/draining"}, 1, "503 Service Unavailable: shutting down", time.Second},
		{[]string{srv.URL + "/moved"}, 1, "302 Found", time.Second},
		{[]string{refused}, 1, "connection refused", time.Second},
		{[]string{"-timeout", "200ms", srv.URL + "/slow"}, 1, "Client.Timeout exceeded", time.Second},
		{[]string{"ftp://example.com/"}, 2, "want an http or https URL", time.Second},
		{[]string{"-timeout", "0s", srv.URL + "/readyz"}, 2, "want a positive duration", time.Second},
		{[]string{srv.URL, srv.URL}, 2, "unexpected argument", time.Second},
		{[]string{"-cacert", "ca.pem", srv.URL + "/readyz"}, 2, "-cacert is for an https URL", time.Second},
	} {
		var out, errOut bytes.Buffer
		start := time.Now()
		code := run(context.Background(), append([]string{"healthcheck"}, tc.args...), &out, &errOut)
		taken := time.Since(start)
		if code != tc.code || !strings.Contains(out.String()+errOut.String(), tc.want) || taken > tc.maxTaken {
			t.Errorf("sluice healthcheck %q: exit %d after %v, stdout %q, stderr %q; want exit %d saying %q within %v",
				tc.args, code, taken.Round(time.Millisecond), out.String(), errOut.String(), tc.code, tc.want, tc.maxTaken)
		}
		if code == 1 && strings.Count(errOut.String(), "\n") != 1 {
			t.Errorf("sluice healthcheck %q: stderr is not one line: %q", tc.args, errOut.String())
		}
	}
}

// With -cacert, an https URL is verified against that CA alone: the
// server's own certificate passes, and without -cacert the same server
// (signed by no CA the system trusts) fails.
func TestHealthcheckVerifiesHTTPSWithTheGivenCA(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ready\n")) }))
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"healthcheck", "-cacert", ca, srv.URL + "/readyz"}, &out, &errOut); code != 0 {
		t.Errorf("with -cacert: exit %d, stderr %q", code, errOut.String())
	}
	out.Reset()
	errOut.Reset()
	if code := run(context.Background(), []string{"healthcheck", srv.URL + "/readyz"}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "certificate") {
		t.Errorf("without -cacert: exit %d, stderr %q; want 1 naming the certificate", code, errOut.String())
	}
}
