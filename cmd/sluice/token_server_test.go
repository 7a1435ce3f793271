package main

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// A token sluice token makes is accepted by a server configured with the
// snippet it prints, for the scopes it names and no others: the round trip
// of the token through the hash printed.
func TestTokenIsAcceptedByAServerOfItsSnippet(t *testing.T) {
	code, out, errOut := runSluice(t, "token", "-name", "ops", "-scopes", "admin")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	first, snippet, ok := strings.Cut(out, "\nadmin:\n")
	token, _, _ := strings.Cut(strings.TrimPrefix(first, "token:  "), "\n")
	if !ok || !strings.HasPrefix(token, "sluice_") {
		t.Fatalf("no token or snippet in:\n%s", out)
	}
	srv := keysServer(t, "t.yaml", minimalConfig+"admin:\n"+snippet)
	admin := httptest.NewServer(srv.AdminHandler())
	t.Cleanup(admin.Close)
	keys := func(tok string, args ...string) (int, string) {
		t.Setenv("SLUICE_TOKEN", tok)
		code, out, errOut := runSluice(t, append([]string{"keys", "-admin", admin.URL}, args...)...)
		return code, out + errOut
	}
	if code, out := keys(token, "inspect", "ip:192.0.2.1"); code != 0 || !strings.Contains(out, "per-second") {
		t.Errorf("inspect with the token: exit %d\n%s", code, out)
	}
	if code, out := keys(token, "reset", "ip:192.0.2.1"); code != 0 || !strings.Contains(out, "reset ip:192.0.2.1") {
		t.Errorf("reset with the token: exit %d\n%s", code, out)
	}
	wrong := token[:len(token)-1] + "A"
	if strings.HasSuffix(token, "A") {
		wrong = token[:len(token)-1] + "B"
	}
	if code, out := keys(wrong, "inspect", "ip:192.0.2.1"); code != 1 || !strings.Contains(out, "401") {
		t.Errorf("inspect with the token changed in its last letter: exit %d\n%s\nwant 1 and a 401", code, out)
	}
	if strings.Contains(errOut, token) {
		t.Errorf("the token is on standard error: %s", errOut)
	}
}

// A token made for scopes that do not include admin is refused by the
// server for what needs admin: sluice keys exits 1 with the 403.
func TestTokenOfOtherScopesIsRefusedAdmin(t *testing.T) {
	_, out, _ := runSluice(t, "token", "-name", "reader", "-scopes", "read")
	first, snippet, _ := strings.Cut(out, "\nadmin:\n")
	token, _, _ := strings.Cut(strings.TrimPrefix(first, "token:  "), "\n")
	srv := keysServer(t, "t.yaml", minimalConfig+"admin:\n"+snippet)
	admin := httptest.NewServer(srv.AdminHandler())
	t.Cleanup(admin.Close)
	t.Setenv("SLUICE_TOKEN", token)
	code, stdout, stderr := runSluice(t, "keys", "-admin", admin.URL, "reset", "ip:192.0.2.1")
	if code != 1 || stdout != "" || !strings.Contains(stderr, "403 Forbidden: The caller reader does not hold the admin scope") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("exit %d, stdout %q, stderr %q; want 1, nothing, and the 403 in one line", code, stdout, stderr)
	}
}
