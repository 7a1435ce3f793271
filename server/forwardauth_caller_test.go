package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// A front proxy refused by forward-auth for want of a caller token is told
// to send it in Sluice-Token: there, Authorization is the described
// client's and is never read as a caller's token.
func TestForwardAuthRefusalNamesTheHeaderItReads(t *testing.T) {
	f := newFixture(t, testConfig)
	r := f.send(t, f.admin, "GET", "/v1/forward-auth", "", map[string]string{
		"Authorization": "Bearer " + testToken, "X-Forwarded-Method": "GET", "X-Forwarded-Uri": "/api/x"})
	var p struct{ Detail string }
	if err := json.NewDecoder(r.Body).Decode(&p); err != nil {
		t.Fatal(err)
	}
	if r.StatusCode != http.StatusUnauthorized || !strings.Contains(p.Detail, "Sluice-Token") || strings.Contains(p.Detail, "Authorization: Bearer") {
		t.Errorf("forward-auth with the caller's token in Authorization: %d %q; want 401 naming Sluice-Token only", r.StatusCode, p.Detail)
	}
	// Elsewhere either header carries it.
	r = f.send(t, f.admin, "GET", "/v1/keys", "", nil)
	p.Detail = ""
	json.NewDecoder(r.Body).Decode(&p)
	if r.StatusCode != http.StatusUnauthorized || !strings.Contains(p.Detail, "Authorization: Bearer") || !strings.Contains(p.Detail, "Sluice-Token") {
		t.Errorf("GET /v1/keys without a token: %d %q; want 401 naming both headers", r.StatusCode, p.Detail)
	}
}
