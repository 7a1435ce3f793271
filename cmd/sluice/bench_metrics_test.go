package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"testing"
)

// bench's figures are the server's: the 200s and 429s it reports of a run
// against a sluice server with a limit of 5 a minute per address are the
// decisions the server's sluice_decisions_total counted, allowed and
// limited, and the requests line their sum.
func TestBenchFiguresMatchTheServersMetrics(t *testing.T) {
	srv := keysServer(t, "b.yaml", "admin:\n  loopback_scopes: [read]\nplans:\n  free:\n    limits: [{name: per-minute, algorithm: fixed-window, quantity: 5, window: 1m}]\n")
	api := httptest.NewServer(srv.PublicHandler())
	defer api.Close()
	admin := httptest.NewServer(srv.AdminHandler())
	defer admin.Close()
	code, out, errOut := runSluice(t, "bench", "-d", "300ms", "-c", "2", "-rate", "100", api.URL+"/x")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	figure := func(re string) int {
		m := regexp.MustCompile(re).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no %s in:\n%s", re, out)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	requests, ok, refused := figure(`requests  (\d+) in`), figure(`200: (\d+)`), figure(`429: (\d+)`)
	resp, err := http.Get(admin.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	decisions := func(result string) int {
		m := regexp.MustCompile(`sluice_decisions_total\{[^}]*result="` + result + `"[^}]*\} (\d+)`).FindSubmatch(metrics)
		if m == nil {
			t.Fatalf("no sluice_decisions_total of result %q in:\n%s", result, metrics)
		}
		n, _ := strconv.Atoi(string(m[1]))
		return n
	}
	// A request in flight when the run ends is decided by the server and
	// left uncounted by bench: one a connection at most, none most runs.
	a, r := decisions("allowed"), decisions("limited")
	if cut := a - ok + r - refused; a < ok || r < refused || cut > 2 || requests != ok+refused || a != 5 {
		t.Errorf("bench: %d requests, %d 200s, %d 429s; the server: %d allowed, %d limited", requests, ok, refused, a, r)
	}
}
