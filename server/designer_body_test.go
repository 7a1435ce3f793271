package server_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// A trace or an imported file over the designer's 1 MiB is refused 413
// with a problem body saying so, before anything is simulated or
// translated.
func TestDesignerRefusesABodyOverItsBoundWithAProblem(t *testing.T) {
	f := newFixture(t, testConfig)
	trace := strings.Repeat("0,k,1\n", (1<<20)/6+1)
	for path, body := range map[string]string{
		"/designer/run":    `{"limit":"100/1m","trace":` + quote(trace) + `}`,
		"/designer/import": `{"format":"nginx","source":` + quote(trace) + `}`,
	} {
		r := f.do(t, "POST", path, body, nil)
		var p struct {
			Status int
			Detail string
		}
		err := json.NewDecoder(r.Body).Decode(&p)
		if r.StatusCode != 413 || r.Header.Get("Content-Type") != "application/problem+json" || err != nil ||
			p.Status != 413 || !strings.Contains(p.Detail, "larger than 1048576 bytes") {
			t.Errorf("%s with a body over 1 MiB: %d %s %v %+v", path, r.StatusCode, r.Header.Get("Content-Type"), err, p)
		}
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
