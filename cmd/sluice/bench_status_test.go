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

// The bound is one answer in ten: of 100 requests, 5 or 10 answered 500
// were a server measured (exit 0), 11 one failing (exit 1).
func TestBenchBoundsServerErrorsAtOneInTen(t *testing.T) {
	for _, c := range []struct{ failed, code int }{{5, 0}, {10, 0}, {11, 1}} {
		var n atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if n.Add(1) <= int64(c.failed) {
				w.WriteHeader(http.StatusInternalServerError)
			}
		}))
		var out, errOut bytes.Buffer
		code := run(context.Background(), []string{"bench", "-n", "100", "-c", "1", srv.URL}, &out, &errOut)
		srv.Close()
		if code != c.code || !strings.Contains(out.String(), fmt.Sprintf("  500: %d\n", c.failed)) {
			t.Errorf("%d of 100 answered 500: exit %d, want %d; stdout:\n%s\nstderr: %s", c.failed, code, c.code, out.String(), errOut.String())
		}
		if want := fmt.Sprintf("%d of 100 answers were 5xx (500: %d)", c.failed, c.failed); c.code == 1 && !strings.Contains(errOut.String(), want) {
			t.Errorf("%d of 100 answered 500: stderr %q, want %q", c.failed, errOut.String(), want)
		}
	}
}
