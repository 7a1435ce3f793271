package server

import (
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// The reload log says which limits keep their clients' state and which
// start afresh.
func TestStateChangesOfAReload(t *testing.T) {
	plan := func(ls ...sluice.Limit) *httplimit.Policy {
		return &httplimit.Policy{Plans: []*httplimit.Plan{{Name: "free", Limits: ls}}}
	}
	minute := sluice.FixedWindow(3, time.Minute).Named("per-minute")
	for _, c := range []struct {
		name string
		cur  *httplimit.Policy
		want string // a part of the only line; "" for none
	}{
		{"quantity", plan(sluice.FixedWindow(5, time.Minute).Named("per-minute")), ""},
		{"algorithm", plan(sluice.GCRA(3, time.Minute).Named("per-minute")), "changes algorithm from fixed-window to gcra: every client's state of it starts afresh"},
		{"renamed with its id", plan(sluice.FixedWindow(3, time.Minute).Named("minutely").WithID("per-minute")), `"per-minute" is renamed "minutely" and keeps its state`},
		{"renamed without an id", plan(sluice.FixedWindow(3, time.Minute).Named("minutely")), `"minutely" is new and starts afresh`},
	} {
		got := stateChanges(plan(minute), c.cur, nil, nil)
		switch {
		case c.want == "" && len(got) != 0:
			t.Errorf("%s: %q, want nothing", c.name, got)
		case c.want != "" && (len(got) != 1 || !strings.Contains(got[0], c.want)):
			t.Errorf("%s: %q, want one line with %q", c.name, got, c.want)
		}
	}
}

// A rule's limits keep their state under the rule's name: the reload log
// says when a rule is renamed (its limits start afresh, whatever their
// ids), removed, or changes a limit's algorithm.
func TestStateChangesOfAReloadOfRules(t *testing.T) {
	policy := &httplimit.Policy{Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(3, time.Minute).Named("per-minute")}}}}
	rule := func(name string, l sluice.Limit) httplimit.Rule {
		return httplimit.Rule{Name: name, Limits: []sluice.Limit{l}}
	}
	uploads := rule("uploads", sluice.FixedWindow(10, time.Hour).Named("per-hour"))
	for _, c := range []struct {
		name string
		cur  []httplimit.Rule
		want []string // a part of each line, in order
	}{
		{"quantity", []httplimit.Rule{rule("uploads", sluice.FixedWindow(20, time.Hour).Named("per-hour"))}, nil},
		{"algorithm", []httplimit.Rule{rule("uploads", sluice.GCRA(10, time.Hour).Named("per-hour"))},
			[]string{`limit "uploads.per-hour" changes algorithm from fixed-window to gcra`}},
		{"renamed", []httplimit.Rule{rule("files", sluice.FixedWindow(10, time.Hour).Named("per-hour").WithID("per-hour"))},
			[]string{`limit "files.per-hour" is new and starts afresh (a rule's limits keep their state under the rule's name`,
				`rule "uploads" is removed`}},
		{"limit renamed with its id", []httplimit.Rule{rule("uploads", sluice.FixedWindow(10, time.Hour).Named("hourly").WithID("per-hour"))},
			[]string{`limit "uploads.per-hour" is renamed "uploads.hourly" and keeps its state`}},
		{"removed", nil, []string{`rule "uploads" is removed: the state its clients spent is no longer read`}},
	} {
		got := stateChanges(policy, policy, []httplimit.Rule{uploads}, c.cur)
		ok := len(got) == len(c.want)
		for i := 0; ok && i < len(got); i++ {
			ok = strings.Contains(got[i], c.want[i])
		}
		if !ok {
			t.Errorf("%s: %q, want lines with %q", c.name, got, c.want)
		}
	}
}
