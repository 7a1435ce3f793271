package routes

import (
	"net/http/httptest"
	"testing"
)

// A method is matched as sent (RFC 9110 §9.1: methods are case-sensitive,
// and so is ServeMux), then in upper case: "purge /cache" is matched by
// purge /cache under every spelling, as an expensive class reads it
// (MatchesAny), and as written, as a critical or health class reads it
// (MatchesAsWritten); PURGE /cache, another method, is no spelling of it
// as written. "POST /bulk" is matched by post /bulk under MatchesAny only.
func TestMuxReadsAMethodAsSentThenInUpperCase(t *testing.T) {
	var m Mux
	for _, p := range []string{"purge /cache", "POST /bulk"} {
		if err := m.Handle(p); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		method, path string
		any, written bool
	}{
		{"purge", "/cache", true, true},
		{"purge", "/cache/", true, false},
		{"purge", "/Cache", true, false},
		{"purge", "/cache.json", true, false},
		{"PURGE", "/cache", false, false},
		{"post", "/bulk", true, false},
		{"POST", "/bulk", true, true},
	} {
		r := httptest.NewRequest(c.method, c.path, nil)
		if got := m.MatchesAny(r); got != c.any {
			t.Errorf("%s %s: MatchesAny %v, want %v", c.method, c.path, got, c.any)
		}
		if got := m.MatchesAsWritten(r); got != c.written {
			t.Errorf("%s %s: MatchesAsWritten %v, want %v", c.method, c.path, got, c.written)
		}
	}
}
