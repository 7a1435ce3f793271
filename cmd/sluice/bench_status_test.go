package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
)

// A server that answers every request with a 5xx (an upstream that is
// down, a store that cannot be reached) was not measured doing its work:
// the run prints its figures and exits 1, with one line on stderr naming
// how many answers were 5xx, of how many, and their statuses.
func TestBenchFailsWhenTheServerAnswers5xx(t *testing.T) {
	for _, status := range []int{http.StatusServiceUnavailable, http.StatusInternalServerError} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(status) }))
		var out, errOut bytes.Buffer
		code := run(context.Background(), []string{"bench", "-d", "200ms", "-c", "2", srv.URL}, &out, &errOut)
		srv.Close()
		m := regexp.MustCompile(fmt.Sprintf(`statuses  %d: (\d+)\n`, status)).FindStringSubmatch(out.String())
		if m == nil {
			t.Fatalf("%d: no statuses line of %ds alone:\n%s", status, status, out.String())
		}
		want := fmt.Sprintf("%s of %s answers were 5xx (%d: %s)", m[1], m[1], status, m[1])
		if code != 1 || !strings.Contains(errOut.String(), want) || strings.Count(errOut.String(), "\n") != 1 {
			t.Errorf("%d to every request: exit %d, stderr %q; want 1 and one line saying %q", status, code, errOut.String(), want)
		}
	}
}

// The bound is one answer in ten: a server that fails fewer (here 1 in 20
// with a 500) was measured, and the run exits 0. (A guard: it passes on a
// bench that never looked at 5xx.)
func TestBenchAcceptsAFewServerErrors(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%20 == 0 {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"bench", "-d", "200ms", "-c", "1", srv.URL}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "500: ") {
		t.Errorf("exit %d, want 0 and some 500s counted; stdout:\n%s\nstderr: %s", code, out.String(), errOut.String())
	}
}
