package main

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
)

// healthcheck, as keys and bench, never prints the password of a URL's
// user information (redactURL), on stdout when the check passes or on
// stderr when it fails: a container runtime keeps that output in the
// health log that `docker inspect` shows.
func TestHealthcheckNeverPrintsTheURLsPassword(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("down") != "" {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	})}
	go srv.Serve(ln)
	defer srv.Close()
	for _, q := range []string{"", "?down=1"} {
		url := "http://admin:hunter2@" + ln.Addr().String() + "/readyz" + q
		code, stdout, stderr := runSluice(t, "healthcheck", url)
		if strings.Contains(stdout+stderr, "hunter2") {
			t.Errorf("healthcheck %s: exit %d, stdout %q, stderr %q: the password is printed", url, code, stdout, stderr)
		}
	}
}

// -rate is "0 (closed loop) or a positive rate": NaN (which passed
// rate < 0 and ran a closed loop nobody asked for) and ±Inf are a command
// line bench cannot use, status 2.
func TestBenchRefusesARateThatIsNoNumber(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})}
	go srv.Serve(ln)
	defer srv.Close()
	for _, rate := range []string{"NaN", "+Inf", "-Inf"} {
		code, stdout, stderr := runSluice(t, "bench", "-rate", rate, "-n", "1", "-c", "1", "http://"+ln.Addr().String()+"/")
		if code != 2 {
			t.Errorf("bench -rate %s: exit %d, stdout %q, stderr %q; want 2 and a -rate usage error", rate, code, stdout, stderr)
		}
	}
}
