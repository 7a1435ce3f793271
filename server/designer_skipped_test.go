package server_test

import (
	"encoding/json"
	"testing"
)

// A trace run with skip_bad_lines says which lines it skipped, as sluice
// simulate does: a web caller otherwise never learns its trace was read in
// part.
func TestDesignerRunSaysWhichLinesItSkipped(t *testing.T) {
	f := newFixture(t, testConfig)
	body := `{"trace":"0,a,1\n1,a,one\n2,b,1\n","skip_bad_lines":true,"limit":"10/1m","algorithms":["fixed-window"]}`
	r := f.do(t, "POST", "/designer/run", body, nil)
	defer r.Body.Close()
	var got struct {
		Skipped []struct {
			Line   int    `json:"line"`
			Reason string `json:"reason"`
		} `json:"skipped"`
	}
	if err := json.NewDecoder(r.Body).Decode(&got); err != nil || r.StatusCode != 200 {
		t.Fatalf("%d %v", r.StatusCode, err)
	}
	if len(got.Skipped) != 1 || got.Skipped[0].Line != 2 || got.Skipped[0].Reason == "" {
		t.Errorf("skipped %+v, want line 2 with its reason", got.Skipped)
	}
}
