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

// The cost check judges a rule's except_paths as httplimit applies them:
// a route of cost whose paths respell the path they leave out (with a
// format suffix, with its trailing slash) is not the rule's, so a rule
// whose limit holds less than that cost loads, and those requests, which
// the route it leaves out serves, are admitted.
func TestExceptPathsLeaveOutTheRespellingsOfARouteOfCost(t *testing.T) {
	const file = "plans:\n  free:\n    limits: [{name: m, algorithm: gcra, quantity: 1000, window: 1m}]\n" +
		"    costs: {\"POST /v1/bulk.json\": 50, \"POST /v1/bulk/{$}\": 50}\n" +
		"rules:\n  - name: api\n    match: {paths: [\"/v1/\"], except_paths: [\"/v1/bulk\"]}\n" +
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
	for _, p := range []string{"/v1/bulk.json", "/v1/bulk/", "/v1/bulk"} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("POST", p, nil))
		got = append(got, w.Code)
	}
	if want := []int{200, 200, 200}; !slices.Equal(got, want) {
		t.Errorf("POST /v1/bulk.json, /v1/bulk/, /v1/bulk: %v, want %v", got, want)
	}
}
