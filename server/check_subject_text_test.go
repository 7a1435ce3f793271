package server_test

import (
	"strings"
	"testing"
)

// Two different subjects are two clients (docs/api.md: "subject: an
// opaque client name of yours; stored as ext:<subject>"), each with a
// count of its own. A subject holding a byte that is not UTF-8, or a
// \uD800–\uDFFF escape outside a surrogate pair, would read as U+FFFD
// ("a\xff" and "a\xfe", "b\ud800" and "b\udbff" one client ext:a\ufffd,
// the second charged for the first's requests): each is a 400 naming the
// member instead, and charges no one.
func TestSubjectsThatAreNotTextAreRefusedNotMerged(t *testing.T) {
	f := newFixture(t, testConfig)
	for _, pair := range [][2]string{
		{"{\"subject\":\"a\xff\"}", "{\"subject\":\"a\xfe\"}"},
		{`{"subject":"b\ud800"}`, `{"subject":"b\udbff"}`},
		{`{"subject":"c\udc00x"}`, `{"subject":"c\\\udfffx"}`},
	} {
		st1, m1, raw1 := postCheck(t, f, pair[0])
		st2, m2, raw2 := postCheck(t, f, pair[1])
		for i, st := range []int{st1, st2} {
			detail, _ := []map[string]any{m1, m2}[i]["detail"].(string)
			if st != 400 || !strings.Contains(detail, `"subject"`) {
				t.Errorf("%q: %d %q, want a 400 naming \"subject\"", pair[i], st, detail)
			}
		}
		if st1 == 200 && st2 == 200 && m1["remaining"] != m2["remaining"] {
			t.Errorf("%q then %q: remaining %v then %v: the second was charged under the first's key\n%s%s",
				pair[0], pair[1], m1["remaining"], m2["remaining"], raw1, raw2)
		}
	}
	// Text stays a client of its own: an escaped backslash before "ud800",
	// a surrogate pair, U+FFFD itself.
	for _, body := range []string{`{"subject":"d\\ud800"}`, `{"subject":"d\ud83d\ude00"}`, `{"subject":"d\ufffd"}`} {
		if st, _, raw := postCheck(t, f, body); st != 200 {
			t.Errorf("%s: %d %s, want 200", body, st, raw)
		}
	}
}
