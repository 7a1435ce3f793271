package httplimit

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// TestSubjectNamesACookieKeyByItsValueAsABrowserShowsIt: a cookie: key
// counts a value with its escapes decoded (see cookieDecoded), so an
// operator naming the value as a browser shows it (s%3Aabc.def), decoded
// (s:abc.def) or in quotes reaches the state its requests spent, not one
// no request spends; a value whose escapes upstreams decode differently
// names the ambiguous "~" state those requests share.
func TestSubjectNamesACookieKeyByItsValueAsABrowserShowsIt(t *testing.T) {
	limits := []sluice.Limit{sluice.FixedWindow(5, time.Minute)}
	m, err := New(sluice.NewLimiter(memory.New()), Options{
		Plans:         []*Plan{{Name: "free", Limits: limits}},
		AnonymousPlan: "free",
		Rules:         []Rule{{Name: "ck", Paths: []string{"/ck"}, Key: []string{KeyCookie + "sid"}, Limits: limits}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cookie string
		named  []string
	}{
		{"sid=s%3Aabc.def", []string{"rule:ck/s%3Aabc.def", "rule:ck/s:abc.def", `rule:ck/ "s%3Aabc.def" `, "rule:ck/s%3aabc%2Edef"}},
		{"sid=a+b", []string{"rule:ck/a+b"}},
		{"sid=a%zz%41", []string{"rule:ck/a%zz%41", "rule:ck/~"}},
	} {
		r := httptest.NewRequest("GET", "/ck", nil)
		r.Header.Set("Cookie", c.cookie)
		res, err := m.Decide(r)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.ruleKeys) != 1 {
			t.Fatalf("Cookie %s: rule keys %q, want one", c.cookie, res.ruleKeys)
		}
		want := res.ruleKeys[0][len(m.id.prefix):]
		m.Discard(res)
		for _, named := range c.named {
			if got, err := m.Subject(named); err != nil || got != want {
				t.Errorf("Cookie %s: Subject(%q) = %q, %v; want %q, the key its request was kept under", c.cookie, named, got, err, want)
			}
		}
	}
	if got, err := m.Subject("rule:ck/%20"); err == nil {
		t.Errorf(`Subject("rule:ck/%%20") = %q, nil; want an error: the value is empty once decoded`, got)
	}
}
