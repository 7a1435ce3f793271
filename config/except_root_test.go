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

// The cost check judges an except_paths subtree as httplimit applies it:
// it leaves out its root without the trailing slash (ServeMux redirects
// /v1/admin to /v1/admin/; Rails reads /v1/admin.json as /v1/admin), so a
// rule of /v1/ whose limit holds less than the cost of those routes
// loads, and their requests are admitted.
func TestAnExceptedSubtreeLeavesOutTheCostOfItsRoot(t *testing.T) {
	const file = "plans:\n  free:\n    limits: [{name: m, algorithm: gcra, quantity: 1000, window: 1m}]\n" +
		"    costs: {\"POST /v1/admin\": 50, \"POST /v1/admin.json\": 50}\n" +
		"rules:\n  - name: api\n    match: {paths: [\"/v1/\"], except_paths: [\"/v1/admin/\"]}\n" +
		"    limits: [{name: m, algorithm: fixed-window, quantity: 5, window: 1m}]\n"
	cfg, err := config.Parse("r.yaml", []byte(file))
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
	for _, p := range []string{"/v1/admin", "/v1/admin.json", "/v1/admin/"} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("POST", p, nil))
		got = append(got, w.Code)
	}
	if want := []int{200, 200, 200}; !slices.Equal(got, want) {
		t.Errorf("POST /v1/admin, /v1/admin.json, /v1/admin/: %v, want %v", got, want)
	}
}

// A path of the rule that names the subtree's root keeps it: ServeMux
// routes /v1/admin to "/v1/admin" rather than redirect it, so the rule
// takes the requests that a cost of "POST /v1/admin" charges, and a
// limit below that cost is refused at load.
func TestARulePathNamingAnExceptedSubtreesRootKeepsItsCost(t *testing.T) {
	const file = "plans:\n  free:\n    limits: [{name: m, algorithm: gcra, quantity: 1000, window: 1m}]\n" +
		"    costs: {\"POST /v1/admin\": 50}\n" +
		"rules:\n  - name: api\n    match: {paths: [\"/v1/\", \"/v1/admin\"], except_paths: [\"/v1/admin/\"]}\n" +
		"    limits: [{name: m, algorithm: fixed-window, quantity: 5, window: 1m}]\n"
	if _, err := config.Parse("r.yaml", []byte(file)); err == nil {
		t.Error("loaded; want the rule's limit of 5 refused below the cost of POST /v1/admin")
	}
}
