package routes

import "testing"

// Covering answers whether the patterns of a Mux, matched as an exempt
// list is (MatchesAsWritten), take every request of another pattern: by
// a wildcard or a subtree of theirs, or by GET's match of HEAD; not when
// the other's wildcard or subtree, or method, leaves some request theirs
// do not match, nor when ServeMux matches it only by redirecting to a
// subtree.
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
		{[]string{"GET /x/{$}", "GET /x/{a}", "GET /x/{a}/{b}"}, "GET /x/", "GET /x/{$}"},
		{[]string{"GET /ab"}, "GET /a%62", "GET /ab"},
		{[]string{"API.example.com/x"}, "GET api.example.com/x", "API.example.com/x"},

		{[]string{"GET /x/y"}, "GET /x/{id}", ""},   // GET /x/z is left
		{[]string{"GET /x/{$}"}, "GET /x/", ""},     // GET /x/z
		{[]string{"GET /x/{id}"}, "GET /x/", ""},    // GET /x/ and GET /x/a/b
		{[]string{"HEAD /x"}, "GET /x", ""},         // the GETs
		{[]string{"GET /x"}, "/x", ""},              // POST /x
		{[]string{"GET /x", "POST /x"}, "/x", ""},   // every other method
		{[]string{"GET /x/"}, "GET /x", ""},         // only redirected to /x/
		{[]string{"GET /{p}"}, "GET /a%2Fb", ""},    // /a/b decoded
		{[]string{"api.example.com/x"}, "/x", ""},   // another host's
		{[]string{"GET /x/{id}"}, "GET /x/y/z", ""}, // a segment more
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
