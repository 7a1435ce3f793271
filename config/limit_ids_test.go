package config_test

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// codesOf serves n requests of GET url through the middleware of cfg on a
// memory store, each with the headers given, and returns their statuses.
func codesOf(t *testing.T, cfg *config.Config, url string, n int, header ...string) []int {
	t.Helper()
	st := memory.New()
	t.Cleanup(func() { st.Close() })
	mw, err := httplimit.New(sluice.NewLimiter(st), cfg.HTTPLimitOptions())
	if err != nil {
		t.Fatalf("config.Parse accepted it, httplimit.New refused it: %v", err)
	}
	h := mw.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	var codes []int
	for range n {
		r := httptest.NewRequest("GET", url, nil)
		for i := 0; i+1 < len(header); i += 2 {
			r.Header.Set(header[i], header[i+1])
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		codes = append(codes, w.Code)
	}
	return codes
}

// keyWithLimits is the keys: entry of the key "acme-secret", on plan free,
// with the limits given (YAML flow mappings).
func keyWithLimits(limits string) string {
	return fmt.Sprintf("keys:\n  - {name: acme, sha256: %x, plan: free, limits: [%s]}\n", sha256.Sum256([]byte("acme-secret")), limits)
}

// A key's own limits are checked with those of its plan, in one call under
// the client's key, and a call may not spend one state (one ID) twice for
// one key: a key's limit whose ID (its id:, else its name) is that of a
// limit of its plan it does not replace would leave every request of the
// key undecided, served without any limit. It is refused at its id: (at
// its name: when it has none), once; replacing the plan's limit of that
// name, or taking an ID of its own, is accepted and limits the key.
func TestAKeysLimitCannotTakeAnIDOfItsPlan(t *testing.T) {
	const plan = `identity: {api_key_headers: [X-API-Key]}
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 1, window: 1m}
      - {name: daily, id: day, algorithm: fixed-window, quantity: 100, window: 24h}
`
	for _, c := range []struct{ limits, want string }{
		{"{name: hourly, id: per-minute, algorithm: fixed-window, quantity: 1000, window: 1h}",
			`k.yaml:8:132: keys[0].limits[0].id: "per-minute" is the ID of the plan's limit "per-minute" too: a key's own limits ` +
				`are checked with its plan's, and the two would share one state (give it an id: of its own)`},
		{"{name: day, algorithm: fixed-window, quantity: 1000, window: 1h}",
			`k.yaml:8:120: keys[0].limits[0].name: "day" is the ID of the plan's limit "daily" too`},
		// Replacing daily by name, under the ID of per-minute, which stays.
		{"{name: daily, id: per-minute, algorithm: fixed-window, quantity: 1000, window: 24h}",
			`k.yaml:8:131: keys[0].limits[0].id: "per-minute" is the ID of the plan's limit "per-minute" too`},
	} {
		_, err := config.Parse("k.yaml", []byte(plan+keyWithLimits(c.limits)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("key limits [%s]: error %v, want %s", c.limits, err, c.want)
		} else if n := len(config.Errors(err)); n != 1 {
			t.Errorf("key limits [%s]: %d errors, want one: %v", c.limits, n, err)
		}
	}
	// A key of the keys file is refused there, at its line.
	_, err := writeKeysConfig(t, fmt.Sprintf("- {name: acme, sha256: %x, plan: free, limits: [{name: hourly, id: per-minute, "+
		"algorithm: gcra, quantity: 1000, window: 1h}]}\n", sha256.Sum256([]byte("acme-secret"))))
	if want := `keys.yaml:1:130: [0].limits[0].id: "per-minute" is the ID of the plan's limit "per-minute" too`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("keys file: error %v, want %s", err, want)
	}
	for _, limits := range []string{
		"{name: per-minute, algorithm: fixed-window, quantity: 1, window: 1m}",
		"{name: hourly, id: hour, algorithm: fixed-window, quantity: 1000, window: 1h}",
		"{name: daily, id: day, algorithm: fixed-window, quantity: 1000, window: 24h}",
	} {
		cfg, err := config.Parse("k.yaml", []byte(plan+keyWithLimits(limits)))
		if err != nil {
			t.Errorf("key limits [%s]: %v", limits, err)
			continue
		}
		if codes := codesOf(t, cfg, "http://x/", 3, "X-API-Key", "acme-secret"); codes[1] != 429 || codes[2] != 429 {
			t.Errorf("key limits [%s]: 1 a minute answered %v, want [200 429 429]", limits, codes)
		}
	}
}

// Two rules' limits, each named and identified by its rule's name, a dot
// and its own ("a" and "b.c", "a.b" and "c": "a.b.c"), may not share an ID:
// both keyed by the client, a request they both match would spend one
// state twice, be left undecided and served. The later is refused.
func TestRuleLimitsCannotShareAnIDAcrossRules(t *testing.T) {
	yml := `plans:
  free:
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m}]
rules:
  - name: a
    match: {paths: [/x]}
    limits: [{name: m, id: b.c, algorithm: fixed-window, quantity: 1, window: 1m}]
  - name: a.b
    match: {paths: [/x]}
    limits: [{name: c, algorithm: fixed-window, quantity: 1, window: 1m}]
`
	want := `r.yaml:10:14: rules[1].limits[0]: "a.b.c" is already the ID of a limit of rule a, whose state a rule keyed by the client would share`
	if _, err := config.Parse("r.yaml", []byte(yml)); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want %s", err, want)
	}
	cfg, err := config.Parse("r.yaml", []byte(strings.Replace(yml, "id: b.c", "id: b.d", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if codes := codesOf(t, cfg, "http://x/x", 3); codes[1] != 429 || codes[2] != 429 {
		t.Errorf("rules of IDs a.b.d and a.b.c admitting 1 a minute: %v, want [200 429 429]", codes)
	}
}
