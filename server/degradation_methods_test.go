package server_test

import (
	"net/http"
	"testing"
)

// HEAD /v1/degradation is answered as GET is, without a body; a method
// the endpoint does not take is a 405 whose Allow lists every method it
// does take.
func TestDegradationEndpointMethods(t *testing.T) {
	f := newFixture(t, degradeConfig)
	if r := f.do(t, http.MethodHead, "/v1/degradation", "", nil); r.StatusCode != http.StatusOK {
		t.Errorf("HEAD /v1/degradation: %d, want 200", r.StatusCode)
	}
	r := f.do(t, http.MethodPatch, "/v1/degradation", "", nil)
	if got, want := r.Header.Get("Allow"), "GET, HEAD, PUT, POST, DELETE"; r.StatusCode != http.StatusMethodNotAllowed || got != want {
		t.Errorf("PATCH /v1/degradation: %d, Allow %q, want 405 and %q", r.StatusCode, got, want)
	}
	if r := f.do(t, http.MethodPost, "/v1/degradation", `{"level":"high"}`, nil); r.StatusCode != http.StatusOK {
		t.Errorf("POST /v1/degradation: %d, want 200 (as PUT)", r.StatusCode)
	}
}
