package server_test

import (
	"strings"
	"testing"
)

// Forward-auth refuses a description the decision API refuses in its
// body — a method that is not one (a space in it, lower case), a request
// target that is not a path ("*"), a host with a space or a control
// character — with a 400 problem naming the header, and spends nothing.
// What a real proxy sends goes on being decided: an absent or empty method
// (a header's value is read without its spaces) is GET, as /v1/check's,
// an absolute-form URI is its path, and a URI longer
// than /v1/check's 2,048-byte path is decided (a proxy's request line may
// be longer).
func TestForwardAuthRefusesAMalformedDescription(t *testing.T) {
	f := newFixture(t, testConfig)
	ask := func(h map[string]string) (int, string, string) {
		t.Helper()
		h["X-Forwarded-For"] = "198.51.100.50"
		r := f.do(t, "GET", "/v1/forward-auth", "", h)
		return r.StatusCode, r.Header.Get("Content-Type"), readAll(t, r)
	}
	for _, c := range []struct {
		name, header string
		h            map[string]string
	}{
		{"a method with a space", "X-Forwarded-Method", map[string]string{"X-Forwarded-Method": "GE T", "X-Forwarded-Uri": "/api/search"}},
		{"a method in lower case", "X-Forwarded-Method", map[string]string{"X-Forwarded-Method": "get", "X-Forwarded-Uri": "/api/search"}},
		{"a method of junk", "X-Original-Method", map[string]string{"X-Original-Method": "gE/t", "X-Original-URI": "/api/search"}},
		{"the target *", "X-Forwarded-Uri", map[string]string{"X-Forwarded-Method": "OPTIONS", "X-Forwarded-Uri": "*"}},
		{"nginx's target *", "X-Original-URI", map[string]string{"X-Original-Method": "OPTIONS", "X-Original-URI": "*"}},
		{"a host with a space", "X-Forwarded-Host", map[string]string{"X-Forwarded-Uri": "/api/search", "X-Forwarded-Host": "api example.com"}},
		{"a host with a tab", "X-Forwarded-Host", map[string]string{"X-Forwarded-Uri": "/api/search", "X-Forwarded-Host": "api\texample.com"}},
		{"a host of 256 bytes", "X-Forwarded-Host", map[string]string{"X-Forwarded-Uri": "/api/search", "X-Forwarded-Host": strings.Repeat("a", 256)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, ct, body := ask(c.h)
			if status != 400 || ct != "application/problem+json" || !strings.Contains(body, c.header) {
				t.Errorf("status %d %s %s, want a 400 problem naming %s", status, ct, body, c.header)
			}
		})
	}
	for _, c := range []struct {
		name string
		h    map[string]string
	}{
		{"no method: GET", map[string]string{"X-Forwarded-Uri": "/api/search"}},
		{"an absolute-form URI", map[string]string{"X-Forwarded-Method": "GET", "X-Forwarded-Uri": "http://api.example.com/api/search"}},
		{"a URI of 4 KiB", map[string]string{"X-Forwarded-Method": "GET", "X-Forwarded-Uri": "/api/search?q=" + strings.Repeat("a", 4<<10)}},
	} {
		status, _, body := ask(c.h)
		if status != 200 {
			t.Errorf("%s: %d %s, want 200", c.name, status, body)
		}
	}
	// Only the three decided requests spent anything.
	status, _, _ := ask(map[string]string{"X-Forwarded-Uri": "/api/search"})
	if status != 429 {
		t.Errorf("a fourth request: %d, want 429 (the refused descriptions spent nothing, the three decided ones all)", status)
	}
}
