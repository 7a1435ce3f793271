package httplimit_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// A bracketed form: name reads the JSON member it nests, as Rails' params
// reads the form field a[b][c][d] and {"a":{"b":{"c":{"d":…}}}} alike, to
// at most four names, as a json: path holds: a name that nests five is
// refused, as json:a.b.c.d.e is, rather than a key that never reads the
// JSON body Rails reads (each attempt counted by its address).
func TestABracketedFormNameNestsAtMostFourNames(t *testing.T) {
	mw, _ := rulesMiddleware(t, bodyKeyRule("form:a[b][c][d]", httplimit.FallbackIP, 2))
	h := mw.Handler(echoBody())
	var got []int
	for i := range 3 {
		body := fmt.Sprintf(`{"a":{"b":{"c":{"d":"victim"}}},"password":"p%d"}`, i)
		got = append(got, sendTyped(t, h, fmt.Sprintf("192.0.2.%d", i+1), http.Header{"Content-Type": {"application/json"}}, body))
	}
	if want := []int{200, 200, 429}; !slices.Equal(got, want) {
		t.Errorf("victim nested four deep, from three addresses: %v, want %v", got, want)
	}

	err := httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(10, time.Minute)}}},
		Rules: []httplimit.Rule{{Name: "r", Key: []string{"form:a[b][c][d][e]"}, Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}}}}.Validate()
	if err == nil || !strings.Contains(err.Error(), "nests at most 4 names") {
		t.Errorf("form:a[b][c][d][e]: %v, want refused: it nests at most 4 names", err)
	}
}
