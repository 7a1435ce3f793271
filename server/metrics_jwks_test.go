package server_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

// sluice_jwks_fetches_total counts each identity.jwt entry's fetches under
// its name: with two issuers, the one whose provider fails shows its
// errors and no success, the one that answers its successes and no error,
// both from the start (at 0 before their first fetch). A reload that drops
// an entry drops its series, so the label's values are those of the
// configuration in force.
func TestJWKSFetchesAreCountedPerEntry(t *testing.T) {
	users := newIDP(t, "u1")
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	t.Cleanup(down.Close)
	entries := `identity:
  jwt:
    - name: users
      jwks_url: ` + users.srv.URL + `
      issuer: https://idp.example.com/
    - name: services
      jwks_url: ` + down.URL + `
      issuer: https://kubernetes.default.svc
`
	f := newFixture(t, strings.Replace(testConfig, "identity:\n", entries, 1))
	metrics := func() string { return readAll(t, f.do(t, "GET", "/metrics", "", nil)) }
	has := func(m, series string) bool { return strings.Contains(m, "\n"+series+" ") }
	var m string
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		m = metrics()
		if has(m, `sluice_jwks_fetches_total{jwt="users",result="ok"}`) && !has(m, `sluice_jwks_fetches_total{jwt="services",result="error"} 0`) &&
			has(m, `sluice_jwks_fetches_total{jwt="services",result="error"}`) && !has(m, `sluice_jwks_fetches_total{jwt="users",result="ok"} 0`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("within 20 s, /metrics did not count the users' keys fetched and the services' fetch failed:\n%s", grepLines(m, "sluice_jwks_fetches_total"))
		}
	}
	for _, want := range []string{`sluice_jwks_fetches_total{jwt="users",result="error"} 0`, `sluice_jwks_fetches_total{jwt="services",result="ok"} 0`} {
		if !strings.Contains(m, "\n"+want+"\n") {
			t.Errorf("/metrics lacks %s:\n%s", want, grepLines(m, "sluice_jwks_fetches_total"))
		}
	}

	text, err := os.ReadFile(f.file)
	if err != nil {
		t.Fatal(err)
	}
	users2 := strings.Replace(string(text), entries, `identity:
  jwt:
    - name: users
      jwks_url: `+users.srv.URL+`
      issuer: https://idp.example.com/
`, 1)
	if users2 == string(text) {
		t.Fatal("the test's configuration does not hold its identity.jwt entries")
	}
	if err := os.WriteFile(f.file, []byte(users2), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := f.srv.Reload(); err != nil {
		t.Fatal(err)
	}
	m = metrics()
	if strings.Contains(m, `jwt="services"`) {
		t.Errorf("after a reload without the services entry, /metrics still has its series:\n%s", grepLines(m, "sluice_jwks_fetches_total"))
	}
	if !has(m, `sluice_jwks_fetches_total{jwt="users",result="ok"}`) {
		t.Errorf("after the reload, /metrics lacks the users' fetches:\n%s", grepLines(m, "sluice_jwks_fetches_total"))
	}
}

// fetchedOnce reports whether metrics (a /metrics answer) counts one
// fetch of the key set of each identity.jwt entry named.
func fetchedOnce(metrics string, entries ...string) bool {
	for _, e := range entries {
		if !strings.Contains(metrics, "\n"+`sluice_jwks_fetches_total{jwt="`+e+`",result="ok"} 1`+"\n") {
			return false
		}
	}
	return true
}
