package routes

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Covering answers whether the patterns of a Mux, matched as an exempt
// list is (MatchesAsWritten), take every request of another pattern: by
// a wildcard or a subtree of theirs, or by GET's match of HEAD; not when
// the other's wildcard or subtree, or method, leaves some request theirs
// do not match, at any depth below a subtree, nor when ServeMux matches
// it only by redirecting to a subtree.
func TestMuxCovering(t *testing.T) {
	for _, c := range []struct {
		mux  []string
		p    string
		want string
	}{
		{[]string{"GET /x/{id}"}, "GET /x/y", "GET /x/{id}"},
		{[]string{"GET /x/{a}"}, "GET /x/{b}", "GET /x/{a}"},
		{[]string{"GET /x/"}, "GET /x/y", "GET /x/"},
		{[]string{"GET /x/"}, "GET /x/{rest...}", "GET /x/"},
		{[]string{"GET /x"}, "HEAD /x", "GET /x"},
		{[]string{"GET /x"}, "GET /x", "GET /x"},
		{[]string{"/x"}, "POST /x", "/x"},
		{[]string{"/x"}, "/x", "/x"},
		{[]string{"GET /x/{$}", "GET /x/{a}", "GET /x/{a}/{b...}"}, "GET /x/", "GET /x/{$}"},
		{[]string{"GET /x/{$}", "GET /x/{a}", "GET /x/{a}/", "GET /x/{a}/{b}", "GET /x/{a}/{b}/"}, "GET /x/{rest...}", "GET /x/{$}"},
		{[]string{"GET /ab"}, "GET /a%62", "GET /ab"},
		{[]string{"API.example.com/x"}, "GET api.example.com/x", "API.example.com/x"},

		{[]string{"GET /x/y"}, "GET /x/{id}", ""},                                         // GET /x/z is left
		{[]string{"GET /x/{$}"}, "GET /x/", ""},                                           // GET /x/z
		{[]string{"GET /x/{id}"}, "GET /x/", ""},                                          // GET /x/ and GET /x/a/b
		{[]string{"HEAD /x"}, "GET /x", ""},                                               // the GETs
		{[]string{"GET /x"}, "/x", ""},                                                    // POST /x
		{[]string{"GET /x", "POST /x"}, "/x", ""},                                         // every other method
		{[]string{"GET /x/"}, "GET /x", ""},                                               // only redirected to /x/
		{[]string{"GET /{p}"}, "GET /a%2Fb", ""},                                          // /a/b decoded
		{[]string{"api.example.com/x"}, "/x", ""},                                         // another host's
		{[]string{"GET /x/{id}"}, "GET /x/y/z", ""},                                       // a segment more
		{[]string{"GET /x/{$}", "GET /x/{a}", "GET /x/{a}/{b}"}, "GET /x/", ""},           // GET /x/a/, GET /x/a/b/c
		{[]string{"GET /x/{$}", "GET /x/{a}", "GET /x/{a}/{b}/"}, "GET /x/{rest...}", ""}, // GET /x/a/
		{[]string{"GET /x/{rest...}", "GET /x/y/"}, "GET /x/{id}", ""},                    // GET /x/y, redirected
		{[]string{"/x/{rest...}", "h.example/x/{a}/"}, "GET /x/{id}", ""},                 // GET h.example/x/z, redirected
		{nil, "GET /x", ""},
	} {
		var m Mux
		for _, p := range c.mux {
			if err := m.Handle(p); err != nil {
				t.Fatal(err)
			}
		}
		if got := m.Covering(c.p); got != c.want {
			t.Errorf("%q covering %q = %q, want %q", c.mux, c.p, got, c.want)
		}
	}
}

// Covering tries a subtree deeper than the deepest of m's patterns:
// patterns that take a subtree's root and the first two segments below it
// leave it the requests three segments below (GET /docs/a/b/c), which the
// server's MatchesAsWritten does not match either.
func TestMuxCoveringLooksBelowTheDeepestPattern(t *testing.T) {
	exempt := []string{"GET /docs/{$}", "GET /docs/{page}", "GET /docs/{section}/{page}"}
	var m Mux
	for _, p := range exempt {
		if err := m.Handle(p); err != nil {
			t.Fatal(err)
		}
	}
	if m.MatchesAsWritten(httptest.NewRequest(http.MethodGet, "/docs/a/b/c", nil)) {
		t.Fatal("premise: /docs/a/b/c matches")
	}
	for _, p := range []string{"GET /docs/", "GET /docs/{rest...}"} {
		if got := m.Covering(p); got != "" {
			t.Errorf("%q covering %q = %q, want \"\": GET /docs/a/b/c is a request of it that no pattern matches", exempt, p, got)
		}
	}
}

// Covering reads what the patterns write as Handle gathered it, and finds
// a segment none writes however they are crafted ("x", "xx", "xxx"…, "x1",
// "x2"…), in time that does not grow with them: four times the patterns
// take about as long to ask about, far from the sixteen times of reading
// every pattern again, or trying each crafted literal against all, on
// each question. Best of 3 of each, for a loaded machine.
func TestMuxCoveringTimeDoesNotGrowWithCraftedLiterals(t *testing.T) {
	took := func(n int) time.Duration {
		var m Mux
		for i := 1; i <= n; i++ {
			for _, p := range []string{"GET /" + strings.Repeat("x", i), "GET /x" + strconv.Itoa(i)} {
				if err := m.Handle(p); err != nil {
					t.Fatal(err)
				}
			}
		}
		best := time.Duration(1<<63 - 1)
		for range 3 {
			start := time.Now()
			for range 500 {
				if got := m.Covering("GET /{id}"); got != "" {
					t.Fatalf("covering GET /{id} = %q, want \"\"", got)
				}
			}
			best = min(best, time.Since(start))
		}
		return best
	}
	small, large := took(250), took(1000)
	if large > 4*small {
		t.Errorf("500 questions of a Mux of 1,000 crafted literals of each kind took %v, of 250 %v: want about as long", large, small)
	}
}
