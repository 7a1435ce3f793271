package config_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// exceptRootFile is a plan of costs beside a rule of /v1/ that leaves out
// the subtree /v1/admin/, whose limit holds quantity.
func exceptRootFile(costs, quantity string) string {
	return "plans:\n  free:\n    limits: [{name: m, algorithm: gcra, quantity: 1000, window: 1m}]\n" +
		"    costs: " + costs + "\n" +
		"rules:\n  - name: api\n    match: {paths: [\"/v1/\"], except_paths: [\"/v1/admin/\"]}\n" +
		"    limits: [{name: m, algorithm: fixed-window, quantity: " + quantity + ", window: 1m}]\n"
}

// The cost check judges an except_paths subtree's root without the slash
// as httplimit applies it: the rule's (/v1/admin, /v1/admin.json), at
// the cost a plan charges it, its own or, through ServeMux's redirect,
// that of the subtree's route. A rule whose limit holds less is refused
// at load, as every such request would be refused.
func TestTheCostOfAnExceptedSubtreesRootIsHeldByTheRule(t *testing.T) {
	for _, costs := range []string{
		`{"POST /v1/admin": 50}`,
		`{"POST /v1/admin.json": 50}`,
		`{"POST /v1/admin/": 50}`,
		`{"/v1/admin/{$}": 50}`,
	} {
		if _, err := config.Parse("r.yaml", []byte(exceptRootFile(costs, "5"))); err == nil {
			t.Errorf("costs %s: loaded; want the rule's limit of 5 refused below 50", costs)
		}
	}
	// What is below the subtree alone is not the rule's.
	if _, err := config.Parse("r.yaml", []byte(exceptRootFile(`{"POST /v1/admin/{id}": 50}`, "5"))); err != nil {
		t.Errorf(`costs {"POST /v1/admin/{id}": 50}: %v, want loaded`, err)
	}
}

// A rule that holds the subtree route's cost loads, and counts its root
// without the slash at that cost, not the subtree itself.
func TestARuleHoldingTheCostOfAnExceptedSubtreesRootCountsIt(t *testing.T) {
	cfg, err := config.Parse("r.yaml", []byte(exceptRootFile(`{"POST /v1/admin/": 50}`, "100")))
	if err != nil {
		t.Fatal(err)
	}
	st := memory.New()
	defer st.Close()
	mw, err := httplimit.New(sluice.NewLimiter(st), cfg.HTTPLimitOptions())
	if err != nil {
		t.Fatal(err)
	}
	h := mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	var got []int
	for _, p := range []string{"/v1/admin/", "/v1/admin/", "/v1/admin/", "/v1/admin", "/v1/admin.json", "/v1/admin"} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("POST", p, nil))
		got = append(got, w.Code)
	}
	if want := []int{200, 200, 200, 200, 200, 429}; !slices.Equal(got, want) {
		t.Errorf("POST /v1/admin/ thrice, then /v1/admin, /v1/admin.json, /v1/admin: %v, want %v", got, want)
	}
}
