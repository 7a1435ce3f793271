package migrate_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportTraefikRequestHostReportsThePortAndCase: Traefik's
// sourceCriterion.requestHost keys by the request's Host as the client
// wrote it (Go's req.Host: api.example.com:8443 and API.example.com are
// buckets of their own), while sluice's key host drops the port, the
// case and a final dot. The import keeps sluice's key, which is what a
// migrating user means (Traefik's routers match every such spelling as
// one host, so its buckets let a client multiply its limit by respelling
// the Host), and the report says so, naming the spellings it counts as one.
func TestImportTraefikRequestHostReportsThePortAndCase(t *testing.T) {
	tr, err := migrate.Import("traefik", `http:
  middlewares:
    by-host:
      rateLimit: {average: 1, period: 1m, burst: 2, sourceCriterion: {requestHost: true}}
  routers:
    api:
      rule: PathPrefix(`+"`/api/`"+`)
      middlewares: [by-host]
      service: api
`, "dynamic.yaml")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, d := range tr.Differences {
		if d.Same && strings.Contains(d.Text, "requestHost") {
			t.Errorf("requestHost reported as the same: %q", d.Text)
		}
		if !d.Same && strings.Contains(d.Text, "Example.com") && strings.Contains(d.Text, "example.com:443") && strings.Contains(d.Text, "one bucket") && strings.Contains(d.Text, "deliberate") {
			found = true
		}
	}
	if !found {
		t.Errorf("no difference says that Example.com and example.com:443 share one bucket in sluice, two in Traefik, and that the import means it: %+v", tr.Differences)
	}
	h := serveImported(t, tr)
	var got []int
	for _, host := range []string{"example.com", "Example.com", "example.com:443", "other.example"} {
		r := httptest.NewRequest("GET", "/api/x", nil)
		r.Host, r.RemoteAddr = host, "192.0.2.1:1234"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		got = append(got, w.Code)
	}
	// One bucket of 2 for the three spellings of example.com; another host
	// its own.
	if want := []int{200, 200, 429, 200}; !equalInts(got, want) {
		t.Errorf("statuses %v, want %v", got, want)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
