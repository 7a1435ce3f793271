package server_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// keysQueryConfig gives the listed key k1 three limits: per-minute, and
// the penalty box's penalty and penalty-refusals.
const keysQueryConfig = testConfig + "penalty: {refusals: 20, within: 1m, for: 10m}\n"

// keyUse reads what name:k1 has used of each of its limits.
func keyUse(t *testing.T, f *fixture) map[string]int64 {
	t.Helper()
	var state struct {
		Limits []struct {
			Name string `json:"name"`
			Used int64  `json:"used"`
		} `json:"limits"`
	}
	decode(t, f.do(t, "GET", "/v1/keys/name:k1", "", nil), &state)
	used := map[string]int64{}
	for _, l := range state.Limits {
		used[l.Name] = l.Used
	}
	return used
}

// DELETE /v1/keys/{subject} forgets every limit of the subject without a
// parameter, and the one limit named by limit= with it. Any other query —
// a parameter it does not take (a typo: ?limt=per-minute), an empty
// limit=, a limit= given twice, a query that does not parse — is a 400
// whose problem names the parameter, and forgets nothing: an operator's
// typo never widens the reset to every limit, the penalty box included.
func TestAKeyResetRefusesAQueryItDoesNotTake(t *testing.T) {
	f := newFixture(t, keysQueryConfig)
	for range 2 {
		f.do(t, "GET", "/api/search", "", map[string]string{"Authorization": "Bearer demo-free-key"})
	}
	if r := f.do(t, "POST", "/v1/keys/name:k1?action=penalize", "", nil); r.StatusCode != 200 {
		t.Fatalf("penalize: %d %s", r.StatusCode, readAll(t, r))
	}
	before := keyUse(t, f)
	if before["per-minute"] != 2 || before["penalty"] != 1 {
		t.Fatalf("before the resets: used %v; want per-minute 2, penalty 1", before)
	}
	for _, c := range []struct{ query, names string }{
		{"?limt=per-minute", `"limt"`},
		{"?limit=", `"limit"`},
		{"?limit", `"limit"`},
		{"?limit=per-minute&limit=penalty", `"limit"`},
		{"?plan=", `"plan"`},
		{"?limit=per-minute&action=penalize", `"action"`},
		{"?limit=%zz", `%zz`},
		{"?limit=per-minute;plan=pro", `semicolon`},
	} {
		r := f.do(t, "DELETE", "/v1/keys/name:k1"+c.query, "", nil)
		var p struct{ Detail string }
		json.Unmarshal([]byte(readAll(t, r)), &p)
		if r.StatusCode != http.StatusBadRequest || !strings.Contains(p.Detail, c.names) {
			t.Errorf("DELETE %s: %d %q; want 400 naming %s", c.query, r.StatusCode, p.Detail, c.names)
		}
	}
	if after := keyUse(t, f); after["per-minute"] != 2 || after["penalty"] != 1 {
		t.Fatalf("after the refused resets: used %v; want nothing forgotten (per-minute 2, penalty 1)", after)
	}

	var out struct{ Limits []string }
	decode(t, f.do(t, "DELETE", "/v1/keys/name:k1?limit=per-minute", "", nil), &out)
	if !slices.Equal(out.Limits, []string{"per-minute"}) {
		t.Errorf("DELETE ?limit=per-minute: limits %v; want [per-minute]", out.Limits)
	}
	if used := keyUse(t, f); used["per-minute"] != 0 || used["penalty"] != 1 {
		t.Errorf("after DELETE ?limit=per-minute: used %v; want per-minute 0, penalty 1", used)
	}
	decode(t, f.do(t, "DELETE", "/v1/keys/name:k1?plan=free", "", nil), &out)
	if !slices.Equal(out.Limits, []string{"per-minute", "penalty", "penalty-refusals"}) {
		t.Errorf("DELETE ?plan=free: limits %v; want every limit", out.Limits)
	}
	if used := keyUse(t, f); used["penalty"] != 0 {
		t.Errorf("after DELETE ?plan=free: used %v; want nothing", used)
	}
	decode(t, f.do(t, "DELETE", "/v1/keys/name:k1", "", nil), &out)
	if len(out.Limits) != 3 {
		t.Errorf("DELETE without a query: limits %v; want every limit", out.Limits)
	}
}

// The other requests of the key admin API take only their own parameters,
// each once, with a value: anything else is a 400 naming the parameter.
func TestTheKeyAdminAPIRefusesParametersItDoesNotTake(t *testing.T) {
	f := newFixture(t, keysQueryConfig)
	for _, c := range []struct{ method, target, names string }{
		{"GET", "/v1/keys?topp=5", `"topp"`},
		{"GET", "/v1/keys?top=", `"top"`},
		{"GET", "/v1/keys?top=5&top=6", `"top"`},
		{"GET", "/v1/keys/name:k1?plann=pro", `"plann"`},
		{"GET", "/v1/keys/name:k1?plan=pro&plan=free", `"plan"`},
		{"GET", "/v1/keys/name:k1?limit=per-minute", `"limit"`},
		{"POST", "/v1/keys/name:k1?action=penalize&for=1h", `"for"`},
		{"POST", "/v1/keys/name:k1?action=penalize&action=penalize", `"action"`},
	} {
		r := f.do(t, c.method, c.target, "", nil)
		var p struct{ Detail string }
		json.Unmarshal([]byte(readAll(t, r)), &p)
		if r.StatusCode != http.StatusBadRequest || !strings.Contains(p.Detail, c.names) {
			t.Errorf("%s %s: %d %q; want 400 naming %s", c.method, c.target, r.StatusCode, p.Detail, c.names)
		}
	}
	if used := keyUse(t, f); used["penalty"] != 0 {
		t.Errorf("a refused penalize boxed the client: used %v", used)
	}
	for _, target := range []string{"/v1/keys?top=5", "/v1/keys", "/v1/keys/name:k1?plan=pro", "/v1/keys/name:k1"} {
		if r := f.do(t, "GET", target, "", nil); r.StatusCode != 200 {
			t.Errorf("GET %s: %d %s; want 200", target, r.StatusCode, readAll(t, r))
		}
	}
}
