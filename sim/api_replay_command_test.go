package sim

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The replay command DesignAPI's next steps suggest for each plan is one
// `sluice simulate` accepts (an algorithm listed once), and a calendar
// quota's carries its zone and first day, as the configuration counts it.
func TestDesignAPIReplayCommandsRunAsConfigured(t *testing.T) {
	y := `name: X
plans:
  - name: free
    clients: 100
    limits: [{rate: 100/1m}]
  - name: pro
    clients: 100
    limits: [{rate: 1000/month, zone: "+09:00", starts: 15}]
`
	req, err := ReadAPIRequirements(strings.NewReader(y), "api.yaml")
	if err != nil {
		t.Fatal(err)
	}
	req.MaxArrivals = 3000
	a, err := DesignAPI(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	cmds := regexp.MustCompile("`sluice simulate -trace ([a-z]+)\\.csv ([^`]*)`").FindAllStringSubmatch(a.Markdown, -1)
	if len(cmds) != 2 {
		t.Fatalf("%d replay commands, want one per plan:\n%s", len(cmds), a.Markdown)
	}
	for _, c := range cmds {
		plan, f := c[1], strings.Fields(c[2])
		r := Request{Trace: "0,a\n"}
		for i := 0; i+1 < len(f); i += 2 {
			switch v := f[i+1]; f[i] {
			case "-limit":
				r.Limit = v
			case "-reference":
				r.Reference = v
			case "-algorithms":
				r.Algorithms = strings.Split(v, ",")
			case "-burst":
				r.Burst, _ = strconv.ParseInt(v, 10, 64)
			case "-zone":
				r.Zone = v
			case "-starts":
				r.Starts = Starts(v)
			}
		}
		if err := r.Validate(); err != nil {
			t.Errorf("plan %s: the suggested command %q is refused: %v", plan, c[0], err)
		}
		if plan == "pro" && (r.Zone != "+09:00" || r.Starts != "15") {
			t.Errorf("plan pro: the suggested command %q replays months from the 1st, UTC; the configuration counts them from the 15th, UTC+09:00 (want -zone +09:00 -starts 15)", c[0])
		}
	}
}
