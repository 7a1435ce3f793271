package server_test

import (
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// An upstream whose answer breaks off mid-body (a restart, a crash) has
// failed the request: the reverse proxy's own line of it goes through the
// server's logger (-json-logs) as "upstream failed", bounded with the other
// upstream failures to 10 lines a second (docs/operations.md), never
// unbounded and unstructured to the process's standard log.
func TestProxyErrorsGoToTheServersLogger(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		w.WriteHeader(200)
		io.WriteString(w, "0123456789")
		w.(http.Flusher).Flush()
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
	}))
	t.Cleanup(up.Close)
	file := filepath.Join(t.TempDir(), "sluice.yaml")
	if err := os.WriteFile(file, []byte("upstream: "+up.URL+"\n"+streamsConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	var own, std realtest.Buffer
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	srv, err := server.New(server.Options{Config: cfg, Store: store, Memory: store,
		Logger: slog.New(slog.NewJSONHandler(&own, nil))})
	if err != nil {
		t.Fatal(err)
	}
	prevOut, prevFlags := log.Writer(), log.Flags()
	log.SetOutput(&std)
	t.Cleanup(func() { log.SetOutput(prevOut); log.SetFlags(prevFlags) })
	addrs := serveOn(t, srv)

	for range 3 {
		resp, err := http.Get("http://" + addrs.public + "/download")
		if err != nil {
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if s := std.String(); strings.Contains(s, "ReverseProxy") {
		t.Errorf("the proxy logged to the process's standard log, bypassing the server's logger and its bound:\n%s", s)
	}
	found := false
	for line := range strings.Lines(own.String()) {
		if strings.Contains(line, `"msg":"upstream failed"`) && strings.Contains(line, "ReverseProxy read error") {
			found = true
		}
	}
	if !found {
		t.Errorf("no \"upstream failed\" line of the broken answers in the server's log:\n%s", own.String())
	}
}
