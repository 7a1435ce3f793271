package routes

import (
	"net/http/httptest"
	"testing"
)

// docs/rules.md reads a path as ServeMux reads it escaped (reading 2),
// that reading without a trailing slash (reading 3: "each of those") and
// "the escaped reading in lower case where it puts the segments
// otherwise" (reading 7). ServeMux cleans the escaped path before it
// reads its segments, so /x%2Fy/../bulk/ is /bulk/ to it (the escaped
// slash keeps x%2Fy one segment, which ".." removes), while the decoded
// path is /x/bulk/: that escaped reading is unslashed and lowered too, so
// /x%2Fy/../bulk/ and /x%2Fy/../BULK match "POST /bulk" as /bulk/ and
// /BULK (the same reading, spelled plainly) do.
func TestMuxMatchesAnyReadsAnEscapedPathCleanedOfItsEscapedSlashUnslashedAndLowered(t *testing.T) {
	var m Mux
	if err := m.Handle("POST /bulk"); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{
		"/bulk/", "/BULK", // as ServeMux reads the ones below: matched
		"/x%2Fy/../bulk/",
		"/x%2Fy/../BULK",
		"/X%2FY/../Bulk/",
		"/a/x%2Fy/../../bulk/",
	} {
		if !m.MatchesAny(httptest.NewRequest("POST", target, nil)) {
			t.Errorf("POST %s: MatchesAny false; ServeMux reads it as %s, which reading 3 or 7 reads as /bulk",
				target, CleanPath(httptest.NewRequest("POST", target, nil).URL.EscapedPath()))
		}
	}
}
