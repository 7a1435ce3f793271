package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A run cut short (Ctrl-C, a supervisor's SIGTERM) prints the figures of
// the part that ran, says it was cut short, and exits 1: a script must not
// take it for the run it asked for.
func TestBenchInterruptedSaysSoAndFails(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var out, errOut bytes.Buffer
	start := time.Now()
	code := run(ctx, []string{"bench", "-d", "1m", "-c", "2", "-rate", "100", srv.URL}, &out, &errOut)
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("an interrupted run of -d 1m took %v", took)
	}
	if code != 1 || !strings.Contains(errOut.String(), "interrupted after") || !strings.Contains(errOut.String(), "of the 1m0s asked") {
		t.Errorf("exit %d, want 1 and a line saying the run was interrupted; stderr:\n%s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "requests  ") {
		t.Errorf("the figures of the part that ran are not printed:\n%s", out.String())
	}
}

// A rate so low that its schedule's interval does not fit in a
// time.Duration sends as that rate says (here the one request due at the
// start), never as fast as it can.
func TestBenchTinyRateIsNotAClosedLoop(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { n.Add(1) }))
	defer srv.Close()
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"bench", "-d", "300ms", "-c", "4", "-rate", "1e-9", srv.URL}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if got := n.Load(); got > 1 {
		t.Errorf("%d requests in 0.3 s at 1e-9/s, want the 1 due at the start:\n%s", got, out.String())
	}
}

// A redirect is an answer to count, never a request to send: bench of a
// path whose upstream redirects (to a login page, another site) loads the
// server it was pointed at alone, and reports the 3xx.
func TestBenchFollowsNoRedirect(t *testing.T) {
	var elsewhere atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { elsewhere.Add(1) }))
	defer other.Close()
	srv := httptest.NewServer(http.RedirectHandler(other.URL+"/login", http.StatusFound))
	defer srv.Close()
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"bench", "-d", "200ms", "-c", "2", "-rate", "50", srv.URL}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if n := elsewhere.Load(); n > 0 || !strings.Contains(out.String(), "302: ") {
		t.Errorf("%d requests reached the redirect's target, want 0 and the 302s counted:\n%s", n, out.String())
	}
}

// A -H without a colon is often a credential given alone (-H "$TOKEN"
// for -H "Authorization: Bearer $TOKEN"): refused, it is not printed
// back, and the error says which -H and what it wants.
func TestBenchNeverPrintsAHeaderItRefuses(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"bench", "-H", "Accept: */*", "-H", "Bearer s3cret-t0ken", "http://127.0.0.1:1/"}, &out, &errOut)
	if said := out.String() + errOut.String(); code != 2 || strings.Contains(said, "s3cret-t0ken") || !strings.Contains(said, "-H") || !strings.Contains(said, "2nd") {
		t.Errorf("exit %d, want 2, the header not printed and the 2nd -H named; printed:\n%s", code, said)
	}
}

// -c is bounded: a number of connections no load test of one server
// needs (a typo's extra zeros) is a usage error before a connection is
// opened, not a run that opens as many as the file descriptor limit
// lets it and reports their failures.
func TestBenchRefusesMoreConnectionsThanItsBound(t *testing.T) {
	var out, errOut bytes.Buffer
	start := time.Now()
	code := run(context.Background(), []string{"bench", "-c", "20000", "-d", "100ms", "http://127.0.0.1:1/"}, &out, &errOut)
	if code != 2 || !strings.Contains(errOut.String(), "-c 20000: at most 10000 connections") || out.Len() > 0 {
		t.Errorf("exit %d after %v, stdout %q, stderr %q; want 2, nothing sent, and the bound", code, time.Since(start), out.String(), errOut.String())
	}
	if code := run(context.Background(), []string{"bench", "-c", "10001", "-d", "100ms", "http://127.0.0.1:1/"}, &out, &errOut); code != 2 {
		t.Errorf("-c 10001: exit %d, want 2", code)
	}
}
