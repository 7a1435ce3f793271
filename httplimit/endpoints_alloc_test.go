package httplimit

import (
	"net/http/httptest"
	"testing"
)

// A request spelled as its literal pattern is written costs it without an
// allocation, beside patterns with upper-case letters (ServeMux allocates
// for a wildcard's value and for the catch-all, so other requests do); a
// respelled one costs what its pattern does.
func TestCostOfARequestAsWrittenAllocatesNothing(t *testing.T) {
	e, err := newEndpoints(nil, map[string]int64{"POST /bulk": 5, "GET /Items/{id}": 2, "GET /items/{id}": 3, "GET /free": 0})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		method, target string
		want           int64
		free           bool // costed without an allocation
	}{
		{"POST", "/bulk", 5, true},
		{"GET", "/free", 0, true},
		{"GET", "/items/7", 3, false},
		{"GET", "/Items/7", 3, false}, // the larger of the patterns that differ only in case
		{"GET", "/other", 1, false},
		{"post", "/BULK/", 5, false},
		{"POST", "/bulk;x=1", 5, false},
		{"GET", "/free/", 1, false}, // a respelling of a free endpoint is not free: a strict upstream serves another
	} {
		r := httptest.NewRequest(c.method, c.target, nil)
		if got := e.cost(r); got != c.want {
			t.Errorf("%s %s: cost %d, want %d", c.method, c.target, got, c.want)
		}
		if !c.free {
			continue
		}
		if n := testing.AllocsPerRun(100, func() { e.cost(r) }); n != 0 {
			t.Errorf("%s %s: %.0f allocations, want 0", c.method, c.target, n)
		}
	}
}
