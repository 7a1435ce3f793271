package server_test

import (
	"encoding/json"
	"net/url"
	"testing"
)

// teamsKeyConfig has a rule keyed by the client and a header, as
// docs/rules.md's "key: [client, header:X-Team]" allows; fallback ip (the
// default), so that a check without X-Team and without ip is counted by
// who the client is (docs/api.md: "each client its own count").
const teamsKeyConfig = `
identity:
  trusted_proxies: [127.0.0.1/32]
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m}
rules:
  - name: teams
    key: [client, header:X-Team]
    limits:
      - {name: per-team, algorithm: fixed-window, quantity: 2, window: 1m}
`

// A decision API subject is "an opaque client name of yours" (docs/api.md),
// kept as ext:<subject>; identity providers' user ids hold a "|"
// ("auth0|5f7c…"), which also joins a rule's values. Subject "m|n" without
// X-Team (its subject standing for the absent value) and subject
// "m|n|ext:m" with X-Team "n" are two clients, each with a count of its
// own: "m|n", never seen before, is admitted at its first check.
func TestARuleKeyOfASubjectWithABarIsItsOwn(t *testing.T) {
	f := newFixture(t, teamsKeyConfig)
	for i := range 2 {
		st, m, raw := postCheck(t, f, `{"subject":"m|n|ext:m","headers":{"X-Team":"n"}}`)
		if st != 200 || m["allowed"] != true {
			t.Fatalf("check %d of m|n|ext:m: %d %s", i+1, st, raw)
		}
	}
	st, m, raw := postCheck(t, f, `{"subject":"m|n"}`)
	if st != 200 || m["allowed"] != true {
		t.Errorf("first check ever of subject m|n: %d %s; want allowed (its rule count is its own, not m|n|ext:m's with X-Team n)", st, raw)
	}
}

// docs/rules.md: a rule's key is rule:<rule>/<values>, "one value per
// attribute of its key, joined by |", each "as a request sends it": a
// client whose subject holds a "|" (auth0|123) is named so too where the
// text reads one way only, and its state can be read and reset.
func TestTheKeyAdminNamesARuleKeyOfASubjectWithABar(t *testing.T) {
	f := newFixture(t, teamsKeyConfig)
	for range 2 {
		if st, _, raw := postCheck(t, f, `{"subject":"auth0|123","headers":{"X-Team":"eng"}}`); st != 200 {
			t.Fatalf("check: %d %s", st, raw)
		}
	}
	subject := "rule:teams/ext:auth0|123|eng"
	r := f.do(t, "GET", "/v1/keys/"+url.PathEscape(subject), "", nil)
	body := readAll(t, r)
	var ks struct {
		Limits []struct {
			Name string `json:"name"`
			Used int64  `json:"used"`
		} `json:"limits"`
	}
	json.Unmarshal([]byte(body), &ks)
	if r.StatusCode != 200 || len(ks.Limits) != 1 || ks.Limits[0].Used != 2 {
		t.Errorf("GET /v1/keys/%s: %d %s; want 200 with teams.per-team used 2", subject, r.StatusCode, body)
	}
	r = f.do(t, "DELETE", "/v1/keys/"+url.PathEscape(subject), "", nil)
	if body := readAll(t, r); r.StatusCode != 200 {
		t.Errorf("DELETE /v1/keys/%s: %d %s; want 200, the state forgotten", subject, r.StatusCode, body)
	}
	if st, m, raw := postCheck(t, f, `{"subject":"auth0|123","headers":{"X-Team":"eng"}}`); st != 200 || m["allowed"] != true {
		t.Errorf("after the reset: %d %s; want allowed", st, raw)
	}
}
