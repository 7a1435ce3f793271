package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// -n N sends N requests, no more and no fewer, closed loop or paced, and
// alone it has no time limit: the run ends when they are answered, not at
// -d's default of 10 s.
func TestBenchSendsTheCountOfN(t *testing.T) {
	for _, args := range [][]string{
		{"-n", "50", "-c", "4"},
		{"-n", "50", "-c", "1"},
		{"-n", "3", "-c", "8"},
		{"-n", "10", "-c", "4", "-rate", "100"},
		{"-n", "5", "-c", "2", "-d", "1m"}, // the count ends the run first
	} {
		var n atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { n.Add(1) }))
		var out, errOut bytes.Buffer
		start := time.Now()
		code := run(context.Background(), append(append([]string{"bench"}, args...), srv.URL), &out, &errOut)
		took := time.Since(start)
		srv.Close()
		want := args[1]
		if code != 0 || took > 8*time.Second {
			t.Errorf("%q: exit %d after %v, want 0 well before -d's default:\n%s%s", args, code, took, out.String(), errOut.String())
		}
		if got := n.Load(); want != strconv.FormatInt(got, 10) || !strings.Contains(out.String(), "requests  "+want+" in ") {
			t.Errorf("%q: the server saw %d requests, want %s, and the report the same:\n%s", args, got, want, out.String())
		}
		if !strings.Contains(out.String(), "for "+want+" requests") {
			t.Errorf("%q: the first line does not say the count:\n%s", args, out.String())
		}
	}
}

// With -n and -d the run ends at whichever comes first: here -d, the
// count being out of reach, and that is a run as asked (exit 0).
func TestBenchEndsAtTheDurationBeforeTheCount(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { n.Add(1) }))
	defer srv.Close()
	var out, errOut bytes.Buffer
	start := time.Now()
	code := run(context.Background(), []string{"bench", "-n", "100000000", "-d", "200ms", "-c", "2", "-rate", "100", srv.URL}, &out, &errOut)
	if took := time.Since(start); code != 0 || took > 5*time.Second {
		t.Errorf("exit %d after %v, want 0 after about 200ms: %s", code, took, errOut.String())
	}
	if got := n.Load(); got < 5 || got > 25 {
		t.Errorf("%d requests in 200ms at 100/s, want about 20:\n%s", got, out.String())
	}
	if !strings.Contains(out.String(), "for 100000000 requests or 200ms, whichever ends first") {
		t.Errorf("the first line does not say how the run ends:\n%s", out.String())
	}
}

// -n below 1 is a usage error, as the other flags' are, before anything
// is sent.
func TestBenchRefusesACountBelowOne(t *testing.T) {
	for _, n := range []string{"0", "-1"} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), []string{"bench", "-n", n, "http://127.0.0.1:1/"}, &out, &errOut)
		if code != 2 || !strings.Contains(errOut.String(), "-n "+n+": want at least 1 request") || out.Len() > 0 {
			t.Errorf("-n %s: exit %d, stdout %q, stderr %q; want 2, nothing sent, and the bound", n, code, out.String(), errOut.String())
		}
	}
}

// A run of -n cut short says how many of the count were sent, and exits
// 1 as an interrupted run of -d does.
func TestBenchInterruptedCountSaysSo(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var out, errOut bytes.Buffer
	code := run(ctx, []string{"bench", "-n", "1000", "-c", "2", "-rate", "100", srv.URL}, &out, &errOut)
	if code != 1 || !strings.Contains(errOut.String(), "interrupted after") || !strings.Contains(errOut.String(), "of the 1000 requests asked (-n)") {
		t.Errorf("exit %d, want 1 and a line saying the run was interrupted; stderr:\n%s", code, errOut.String())
	}
}
