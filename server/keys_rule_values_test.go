package server_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

// TestKeysFindARuleKeyByTheValuesItsRequestsSent: the key admin API takes
// a rule's key as rule:<rule>/<values>, its values joined by "|", each as
// a request sends it or as the store key keeps it ("#" and 32 hex digits
// of a value kept hashed). A value a store key keeps hashed ("data eng")
// names the state its requests spent, not a state never spent with its
// full quota; a reset of it forgets that state.
func TestKeysFindARuleKeyByTheValuesItsRequestsSent(t *testing.T) {
	f := newFixture(t, testConfig+`
rules:
  - name: teams
    match: {paths: ["/teams"]}
    key: ["query:team"]
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 2, window: 1m}]
  - name: reports
    match: {paths: ["/reports"]}
    key: ["query:team", "query:region"]
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 2, window: 1m}]
`)
	sum := sha256.Sum256([]byte("data eng"))
	hashed := "#" + hex.EncodeToString(sum[:16])
	// The client's plan admits 3 a minute: 2 to teams, 1 to reports.
	for _, c := range []struct {
		path     string
		n        int64
		subjects []string
	}{
		{"/teams?team=data%20eng", 2, []string{"rule:teams/data eng", "rule:teams/ data eng\t", "rule:teams/" + strings.ToUpper(hashed)}},
		{"/reports?team=data%20eng&region=eu", 1, []string{"rule:reports/data eng|eu", "rule:reports/" + hashed + "|eu"}},
	} {
		for range c.n {
			r := f.do(t, "GET", c.path, "", map[string]string{"X-API-Key": "demo-free-key"})
			r.Body.Close()
		}
		for _, subject := range c.subjects {
			if used := ruleKeyUsed(t, f, subject); used != c.n {
				t.Errorf("%s, of which %s spent %d: the key API shows %d used", subject, c.path, c.n, used)
			}
		}
		r := f.do(t, "DELETE", "/v1/keys/"+url.PathEscape(c.subjects[0]), "", nil)
		if body := readAll(t, r); r.StatusCode != 200 || !strings.Contains(body, `"forgot":1`) {
			t.Errorf("reset %s: %d %s; want its one state forgotten", c.subjects[0], r.StatusCode, body)
		}
		if used := ruleKeyUsed(t, f, c.subjects[1]); used != 0 {
			t.Errorf("%s after its reset: %d used, want 0", c.subjects[1], used)
		}
	}
	for _, subject := range []string{"rule:reports/data eng", "rule:reports/data eng|eu|x", "rule:reports/data eng|", "rule:teams/ \t"} {
		r := f.do(t, "GET", "/v1/keys/"+url.PathEscape(subject), "", nil)
		if body := readAll(t, r); r.StatusCode != 400 || !strings.Contains(body, "rule") {
			t.Errorf("GET %s: %d %s; want a 400: it names no rule's key", subject, r.StatusCode, body)
		}
	}
}

// ruleKeyUsed returns the units the key API shows subject used of its
// one limit.
func ruleKeyUsed(t *testing.T, f *fixture, subject string) int64 {
	t.Helper()
	r := f.do(t, "GET", "/v1/keys/"+url.PathEscape(subject), "", nil)
	body := readAll(t, r)
	var st struct{ Limits []struct{ Used int64 } }
	if err := json.Unmarshal([]byte(body), &st); err != nil || r.StatusCode != 200 || len(st.Limits) != 1 {
		t.Fatalf("GET %s: %d %s", subject, r.StatusCode, body)
	}
	return st.Limits[0].Used
}
