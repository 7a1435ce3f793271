package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
)

// Every pattern the designer page offers runs with the page's default
// limit (100/1m), and the page's default pattern and a spike with the
// calendar quota its hint suggests (10000/month), though their traffic at
// its default size is above the designer's bounds: the page has no field
// for a pattern's keys, rate or duration, so the designer replays fewer
// keys (many-keys), fewer windows, then a smaller quota with the traffic
// scaled alike (the spike) within its bounds, and says so. Each run at
// 10000/month replays up to the bound of work, seconds under -race:
// designer_fit_table_test.go runs every pattern at more limits, within
// smaller bounds. A request that sets the size itself is refused naming
// the bound.
func TestDesignerFitsThePagesPatternsToItsBounds(t *testing.T) {
	// Runs near the work bound take more than the default 10 s of a
	// loaded machine under -race.
	f := newFixture(t, testConfig+"designer:\n  timeout: 2m\n")
	runs := map[string][]string{
		"100/1m":      {"boundary-burst", "steady", "spike", "diurnal", "retry-storm", "many-keys"},
		"10000/month": {"boundary-burst", "spike"},
	}
	refused, all := 0, 0
	for limit, patterns := range runs {
		for _, p := range patterns {
			all++
			body := fmt.Sprintf(`{"pattern":{"name":%q,"seed":1},"limit":%q,"burst":0,"algorithms":[],"seed":1}`, p, limit)
			r := f.do(t, "POST", "/designer/run", body, nil)
			b, _ := io.ReadAll(r.Body)
			if r.StatusCode != 200 {
				refused++
				t.Errorf("%s at %s: %d %.300s", p, limit, r.StatusCode, b)
				continue
			}
			var got struct {
				Result struct {
					Keys     int `json:"keys"`
					Requests int `json:"requests"`
				} `json:"result"`
				Note string `json:"note"`
			}
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if got.Result.Requests > 200_000 {
				t.Errorf("%s at %s: %d requests, above the bound", p, limit, got.Result.Requests)
			}
			// 100/1m fits all but many-keys as they are.
			if shrunk := limit != "100/1m" || p == "many-keys"; shrunk != (got.Note != "") {
				t.Errorf("%s at %s: note %q", p, limit, got.Note)
			}
			want := "windows (not 10)"
			if p == "many-keys" {
				want = "keys (not 1000)"
			}
			if got.Note != "" && !strings.Contains(got.Note, want) {
				t.Errorf("%s at %s: the note does not say %q: %q", p, limit, want, got.Note)
			}
			// Over 2 windows a spike at 10000/month is about 20,600,000
			// decisions of work: the quota is made smaller.
			if want := "(not 10000/month)"; p == "spike" && limit == "10000/month" && !strings.Contains(got.Note, want) {
				t.Errorf("%s at %s: the note does not say %q: %q", p, limit, want, got.Note)
			}
		}
	}
	t.Logf("%d of %d runs refused", refused, all)
	for _, body := range []string{
		`{"pattern":{"name":"spike","duration":"310d"},"limit":"10000/month"}`,
		`{"pattern":{"name":"steady","rate":14},"limit":"1000000/1d"}`,
		`{"pattern":{"name":"many-keys","keys":1000},"limit":"100/1m"}`,
	} {
		r := f.do(t, "POST", "/designer/run", body, nil)
		var p struct{ Bound string }
		json.NewDecoder(r.Body).Decode(&p)
		if r.StatusCode != 422 || p.Bound == "" {
			t.Errorf("%s: %d naming the bound %q, want 422 naming it", body, r.StatusCode, p.Bound)
		}
	}
}
