package server_test

import (
	"encoding/json"
	"net/http"
	"testing"
)

// A method an admin endpoint does not take is a 405 naming those it takes
// (Allow) in a problem body, never a 404 that says the endpoint does not
// exist; a path that is no endpoint stays a 404.
func TestAdminEndpointsAnswerOtherMethods405(t *testing.T) {
	f := newFixture(t, testConfig)
	for _, c := range []struct{ method, path, allow string }{
		{"PUT", "/metrics", "GET, HEAD"},
		{"POST", "/healthz", "GET, HEAD"},
		{"DELETE", "/readyz", "GET, HEAD"},
		{"POST", "/docs", "GET, HEAD"},
		{"POST", "/dashboard", "GET, HEAD"},
		{"POST", "/dashboard/data", "GET, HEAD"},
		{"PUT", "/designer", "GET, HEAD"},
		{"PUT", "/v1/keys", "GET, HEAD"},
		{"PATCH", "/v1/keys/user:u", "GET, HEAD, DELETE, POST"},
		{"GET", "/v1/check", "POST"},
	} {
		r := f.send(t, f.admin, c.method, c.path, "", map[string]string{"Sluice-Token": testToken})
		var p struct{ Status int }
		err := json.NewDecoder(r.Body).Decode(&p)
		if r.StatusCode != http.StatusMethodNotAllowed || r.Header.Get("Allow") != c.allow ||
			r.Header.Get("Content-Type") != "application/problem+json" || err != nil || p.Status != 405 {
			t.Errorf("%s %s: %d, Allow %q, %s (%v); want 405, Allow %q and a problem body", c.method, c.path, r.StatusCode,
				r.Header.Get("Allow"), r.Header.Get("Content-Type"), err, c.allow)
		}
	}
	if r := f.send(t, f.admin, "GET", "/v1/nothing", "", nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("GET /v1/nothing: %d, want 404", r.StatusCode)
	}
}
