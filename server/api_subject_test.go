package server_test

import (
	"strings"
	"testing"
)

// A subject too long to key the store is refused as the subject: a 400
// naming the field and its bound, which a caller can act on.
func TestDecisionAPISubjectTooLongForTheStore(t *testing.T) {
	f := newFixture(t, testConfig)
	r := f.do(t, "POST", "/v1/check", `{"subject":"`+strings.Repeat("a", 1022)+`"}`, nil)
	body := readAll(t, r)
	if r.StatusCode != 400 || !strings.Contains(body, "subject: 1022 bytes, more than") {
		t.Errorf("%d %s; want 400 naming the subject's bound", r.StatusCode, body)
	}
	if r := f.do(t, "POST", "/v1/check", `{"subject":"`+strings.Repeat("a", 900)+`"}`, nil); r.StatusCode != 200 {
		t.Errorf("a subject of 900 bytes: %d %s", r.StatusCode, readAll(t, r))
	}
}
