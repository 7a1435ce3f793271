package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/examples"
)

// The bench command sends what it is told, with {key} walking -keys keys in
// headers and body, and counts the statuses the server answered.
func TestBenchSendsKeyedRequestsAndCountsStatuses(t *testing.T) {
	var (
		mu   sync.Mutex
		seen = map[string]int{}
		n    atomic.Int64
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Key string }
		if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&body) != nil || body.Key != r.Header.Get("X-API-Key") {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		mu.Lock()
		seen[body.Key]++
		mu.Unlock()
		if n.Add(1)%3 == 0 {
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}))
	defer srv.Close()
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"bench", "-d", "300ms", "-c", "4", "-keys", "5",
		"-H", "X-API-Key: {key}", "-body", `{"key":"{key}"}`, srv.URL + "/v1/check"}, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	t.Log(out.String())
	srv.Close() // waits for handlers still running when the run ended
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 5 {
		t.Errorf("the server saw keys %v, want key-0 … key-4", seen)
	}
	for _, want := range []string{"POST " + srv.URL + "/v1/check", "closed loop", "200: ", "429: ", "latency   p50"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	// " 400: " is the status's count; a bare "400" also matches a port
	// such as 127.0.0.1:40059.
	if strings.Contains(out.String(), " 400: ") || strings.Contains(out.String(), "errors") {
		t.Errorf("a request was malformed or failed:\n%s", out.String())
	}
}

// With -rate the command keeps to its schedule: about rate × duration
// requests, whatever the connection count.
func TestBenchPacedKeepsItsRate(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { n.Add(1) }))
	defer srv.Close()
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"bench", "-d", "500ms", "-c", "4", "-rate", "200", srv.URL}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if got := n.Load(); got < 70 || got > 105 {
		t.Errorf("%d requests in 0.5 s at 200/s, want about 100:\n%s", got, out.String())
	}
	if !strings.Contains(out.String(), "paced at 200/s") {
		t.Errorf("output does not say it was paced:\n%s", out.String())
	}
}

func TestBenchRefusesBadArguments(t *testing.T) {
	for _, args := range [][]string{
		{"bench"},
		{"bench", "localhost:8080"},
		{"bench", "-c", "0", "http://localhost:8080"},
		{"bench", "-d", "0s", "http://localhost:8080"},
		{"bench", "-rate", "-1", "http://localhost:8080"},
		{"bench", "-H", "no colon", "http://localhost:8080"},
	} {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), args, &out, &errOut); code == 0 {
			t.Errorf("%q: exit 0, want an error", args)
		} else if !strings.Contains(errOut.String(), "sluice bench") && !strings.Contains(errOut.String(), "usage") {
			t.Errorf("%q: stderr says nothing useful: %q", args, errOut.String())
		}
	}
}

// A server that is not there is an error, not a report of zero requests.
func TestBenchFailsWhenEveryRequestFails(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"bench", "-d", "100ms", "-c", "2", url}, &out, &errOut); code != 1 {
		t.Fatalf("exit %d, want 1:\n%s\n%s", code, out.String(), errOut.String())
	}
	if !strings.Contains(errOut.String(), "every request failed") {
		t.Errorf("stderr: %q", errOut.String())
	}
}

// The examples of "sluice bench -h" send to the listener of the embedded
// configuration (what "sluice serve" runs without -config) that serves
// their path: the decision API /v1/check on the admin listener, the
// limited API on the public one.
func TestBenchUsageExamplesNameTheServingListener(t *testing.T) {
	cfg, err := config.Parse(examples.ConfigName, examples.Config)
	if err != nil {
		t.Fatal(err)
	}
	port := func(addr string) string {
		_, p, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatalf("%q: %v", addr, err)
		}
		return p
	}
	var out, errOut bytes.Buffer
	run(context.Background(), []string{"bench", "-h"}, &out, &errOut)
	examplesSeen := 0
	for _, line := range strings.Split(errOut.String(), "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "sluice bench ") {
			continue
		}
		fields := strings.Fields(line)
		u, err := url.Parse(fields[len(fields)-1])
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		want := port(cfg.Listen)
		if strings.HasPrefix(u.Path, "/v1/") {
			want = port(cfg.Admin.Listen)
		}
		if u.Port() != want {
			t.Errorf("%s: port %s, want %s (the listener serving %s)", line, u.Port(), want, u.Path)
		}
		examplesSeen++
	}
	if examplesSeen == 0 {
		t.Fatalf("no example in the usage:\n%s", errOut.String())
	}
}

// -H 'Host: …' sends that Host, as curl -H does, to reach a virtual host or
// a rule that matches hosts; {key} walks the keys there too.
func TestBenchSendsTheHostOfH(t *testing.T) {
	var (
		mu    sync.Mutex
		hosts = map[string]bool{}
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hosts[r.Host] = true
		mu.Unlock()
	}))
	defer srv.Close()
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"bench", "-d", "200ms", "-c", "1", "-keys", "1", "-H", "Host: {key}.api.example.com", srv.URL}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	srv.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(hosts) != 1 || !hosts["key-0.api.example.com"] {
		t.Errorf("the server saw hosts %v, want key-0.api.example.com", hosts)
	}
}

// A password in the URL is a secret: bench sends it and never prints it,
// not in its report, its errors nor its refusal of the URL.
func TestBenchNeverPrintsTheURLsPassword(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	withPassword := func(u string) string { return strings.Replace(u, "://", "://ops:s3cret-pw@", 1) }
	for _, args := range [][]string{
		{"bench", "-d", "200ms", "-c", "1", withPassword(srv.URL) + "/api"},
		{"bench", "-d", "200ms", "-c", "1", withPassword("http://127.0.0.1:1") + "/api"},
		{"bench", withPassword("ftp://127.0.0.1:1") + "/api"},
	} {
		var out, errOut bytes.Buffer
		run(context.Background(), args, &out, &errOut)
		if said := out.String() + errOut.String(); strings.Contains(said, "s3cret-pw") || !strings.Contains(said, "127.0.0.1") {
			t.Errorf("%q printed the password (or not the URL):\n%s", args, said)
		}
	}
}

// A run in which no request was answered (a server that holds every
// request past -d) is an error that says so, not a report of zero
// requests that exits 0.
func TestBenchFailsWhenNoRequestIsAnswered(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"bench", "-d", "100ms", "-c", "2", srv.URL}, &out, &errOut); code != 1 {
		t.Fatalf("exit %d, want 1:\n%s\n%s", code, out.String(), errOut.String())
	}
	if !strings.Contains(errOut.String(), "no request was answered") {
		t.Errorf("stderr: %q", errOut.String())
	}
}
