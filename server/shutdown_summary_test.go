package server_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// Past log.refusals_per_second, a line a second says how many refusals
// were left out of the log; the summary's ticker stops when the shutdown
// begins, and Serve writes the summary still pending when it has drained,
// however recent the last: the refusals of the last second before a stop,
// and those of the drain, are counted in a line, not lost.
func TestShutdownSumsUpTheRefusalsItLeftOut(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	defer upstream.Close()
	file := filepath.Join(t.TempDir(), "sluice.yaml")
	text := "upstream: " + upstream.URL + "\n" + `plans:
  anonymous:
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 1, window: 1m}]
anonymous_plan: anonymous
log: {refusals_per_second: 1}
shutdown: {drain: 2s}
`
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New()
	defer store.Close()
	var logs realtest.Buffer
	srv, err := server.New(server.Options{Config: cfg, Store: store, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ls := server.Listeners{Public: listenLoopback(t), Admin: listenLoopback(t)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ls) }()
	refused := 0
	for range 6 { // 1 admitted, 5 refused: 1 line a second, the others left out
		r, err := http.Get("http://" + ls.Public.Addr().String() + "/a")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
		if r.StatusCode == http.StatusTooManyRequests {
			refused++
		}
	}
	if refused != 5 {
		t.Fatalf("%d refused, want 5", refused)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
	lines, said := strings.Count(logs.String(), `msg="request refused"`), 0
	for _, m := range regexp.MustCompile(`msg="refusals not logged" count=(\d+)`).FindAllStringSubmatch(logs.String(), -1) {
		n, _ := strconv.Atoi(m[1])
		said += n
	}
	if lines+said != refused {
		t.Errorf("%d refusals, %d logged and %d said left out; log:\n%s", refused, lines, said, logs.String())
	}
}
