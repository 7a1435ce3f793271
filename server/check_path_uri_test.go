package server_test

import (
	"encoding/json"
	"strconv"
	"testing"
)

// postCheck posts body to /v1/check and returns the status, the decoded
// answer (nil when it is no JSON object) and the answer as read.
func postCheck(t *testing.T, f *fixture, body string) (int, map[string]any, string) {
	t.Helper()
	r := f.do(t, "POST", "/v1/check", body, nil)
	raw := readAll(t, r)
	var m map[string]any
	json.Unmarshal([]byte(raw), &m)
	return r.StatusCode, m, raw
}

// The decision API and forward-auth check a described request's target
// by one rule (describedTarget), so that both refuse the same descriptions
// with a 400: a path with a malformed escape ("%zz"), or one that is only
// a fragment, is no request URI, on either surface.
func TestCheckPathIsARequestURI(t *testing.T) {
	f := newFixture(t, testConfig)
	for _, p := range []string{"/api/generate%zz", "/api/%", "/api/%2", "#x"} {
		fa := f.do(t, "GET", "/v1/forward-auth", "", map[string]string{"X-Forwarded-Uri": p, "X-Forwarded-For": "198.51.100.1"})
		readAll(t, fa)
		st, _, raw := postCheck(t, f, `{"user":"u","path":"`+p+`"}`)
		if st != 400 || fa.StatusCode != 400 {
			t.Errorf("path %s: /v1/check %d %s, forward-auth %d; want 400 from both", p, st, raw, fa.StatusCode)
		}
	}
}

// A fragment is no part of a request target, and forward-auth ends the
// path at "#" (nginx's $request_uri keeps one a client wrote, and nginx
// routes by the path before it): so does the decision API, so that
// "/api/generate#x" costs what /api/generate costs, 2, on both.
func TestCheckPathEndsAtAFragment(t *testing.T) {
	f := newFixture(t, testConfig)
	for i, p := range []string{"/api/generate#x", "/api/generate#/../other", "/api/generate?q=1#x"} {
		st, m, raw := postCheck(t, f, `{"user":"u`+strconv.Itoa(i)+`","method":"POST","path":"`+p+`"}`)
		if st != 200 || m["cost"] != float64(2) {
			t.Errorf("%s: %d, cost %v, want 200 and 2: %s", p, st, m["cost"], raw)
		}
	}
}

// The decision API reads a path as forward-auth reads its URI: its dot
// segments resolved, encoded ones too, in both readings, so that
// /x/%2e%2e/files/a%2Fb is /files/a%2Fb, one segment under /files/ to
// ServeMux, and the files rule applies; a path of three readings
// (/a%2Fb/../files/x) is a 400 on both surfaces.
func TestCheckPathReadsAsForwardAuthReadsIt(t *testing.T) {
	f := newFixture(t, filesRuleConfig)
	for i, want := range []bool{true, false} {
		st, m, raw := postCheck(t, f, `{"user":"u","path":"/x/%2e%2e/files/a%2Fb"}`)
		if st != 200 || m["allowed"] != want {
			t.Errorf("check %d of /x/%%2e%%2e/files/a%%2Fb: %d %s, want allowed %v (the files rule allows 1)", i+1, st, raw, want)
		}
	}
	if st, _, raw := postCheck(t, f, `{"user":"u","path":"/a%2Fb/../files/x"}`); st != 400 {
		t.Errorf("/a%%2Fb/../files/x: %d %s, want 400", st, raw)
	}
}
