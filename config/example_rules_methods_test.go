package config_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// examples/rules.yaml says of its uploads rule's methods what the code
// does (docs/rules.md: "a request's in any case; GET also matches HEAD"):
// its comment says any case, and the rule, loaded from the example,
// counts a request of method "post" as it counts POST and PUT, and not a
// GET. A reader copying the example learns how it matches.
func TestTheRulesExampleSaysHowItsMethodsMatch(t *testing.T) {
	raw, err := os.ReadFile("../examples/rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var comment string
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.Contains(line, "methods: [POST, PUT]") {
			_, comment, _ = strings.Cut(line, "#")
			break
		}
	}
	if !strings.Contains(comment, "any case") || strings.Contains(comment, "exact") {
		t.Errorf("the uploads rule's methods are commented %q: they match a request's method in any case", comment)
	}
	c, err := config.Load("../examples/rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New()
	defer store.Close()
	mw, err := httplimit.New(sluice.NewLimiter(store), c.HTTPLimitOptions())
	if err != nil {
		t.Fatal(err)
	}
	h := mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for method, counted := range map[string]bool{"POST": true, "post": true, "Put": true, "GET": false} {
		r := httptest.NewRequest(method, "/v1/tenants/acme/uploads", nil)
		r.RemoteAddr = "192.0.2.7:1234"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if got := strings.Contains(w.Header().Get("RateLimit"), "uploads.per-minute"); got != counted {
			t.Errorf("%s /v1/tenants/acme/uploads: counted by the uploads rule: %v, want %v (RateLimit: %s)", method, got, counted, w.Header().Get("RateLimit"))
		}
	}
}
