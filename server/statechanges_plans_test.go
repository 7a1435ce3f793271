package server

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
)

// Plans commonly share a limit name ("per-minute" in free and pro, as
// examples/sluice.yaml has them), each with its own algorithm, and the
// store keeps a client's state by the limit's ID and algorithm. A reload
// that changes the algorithm of one plan's limit starts that plan's
// clients afresh: the reload log says so, naming the plan, whichever plan
// it is, and says nothing of the plan that keeps its limit.
func TestStateChangesTellEachPlanSharingALimitName(t *testing.T) {
	policy := func(pro sluice.Limit) *httplimit.Policy {
		return &httplimit.Policy{Plans: []*httplimit.Plan{
			{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(10, time.Minute).Named("per-minute")}},
			{Name: "pro", Limits: []sluice.Limit{pro}},
		}}
	}
	old := policy(sluice.FixedWindow(100, time.Minute).Named("per-minute"))
	cur := policy(sluice.GCRA(100, time.Minute).Named("per-minute"))
	got := stateChanges(old, cur, nil, nil)
	want := `plan "pro": limit "per-minute" changes algorithm from fixed-window to gcra: every client's state of it starts afresh`
	if len(got) != 1 || got[0] != want {
		t.Errorf("pro's per-minute changes algorithm: the reload log says %q, want only %q", got, want)
	}
}

// A key's own limits (keys: limits:) are kept under their IDs for that
// key's client as a plan's are for the plan's: the reload log tells a
// change of their algorithm, an own limit dropped for its plan's of
// another algorithm, and a key moved to a plan whose limit of the same ID
// counts otherwise, naming the key. A limit the key shares with the plan
// it stays on is the plan's line alone, not one more line per key.
func TestStateChangesTellAKeysOwnLimits(t *testing.T) {
	fixed := sluice.FixedWindow(10, time.Minute).Named("per-minute")
	gcra := sluice.GCRA(10, time.Minute).Named("per-minute")
	own := func(alg func(int64, time.Duration) sluice.Limit, q int64) sluice.Limit {
		return alg(q, time.Minute).Named("per-minute")
	}
	plans := func(free sluice.Limit) *httplimit.Policy {
		return &httplimit.Policy{Plans: []*httplimit.Plan{
			{Name: "free", Limits: []sluice.Limit{free}},
			{Name: "pro", Limits: []sluice.Limit{gcra}},
		}}
	}
	cfg := func(p *httplimit.Policy, plan string, limits ...sluice.Limit) *config.Config {
		kp := *p.Plan(plan)
		if len(limits) > 0 {
			kp.Limits = limits
		}
		return &config.Config{Policy: p, Keys: map[[32]byte]*config.Key{{1}: {Name: "acme", Hash: [32]byte{1}, Plan: &kp}}}
	}
	for _, c := range []struct {
		name     string
		old, cur *config.Config
		want     []string // each line, in order
	}{
		{"own limit changes algorithm", cfg(plans(fixed), "free", own(sluice.FixedWindow, 100)), cfg(plans(fixed), "free", own(sluice.GCRA, 100)),
			[]string{`key "acme": limit "per-minute" changes algorithm from fixed-window to gcra: every client's state of it starts afresh`}},
		{"own limit dropped for the plan's", cfg(plans(fixed), "free", own(sluice.GCRA, 100)), cfg(plans(fixed), "free"),
			[]string{`key "acme": limit "per-minute" changes algorithm from gcra to fixed-window: every client's state of it starts afresh`}},
		{"moved to a plan that counts otherwise", cfg(plans(fixed), "free"), cfg(plans(fixed), "pro"),
			[]string{`key "acme": limit "per-minute" changes algorithm from fixed-window to gcra: every client's state of it starts afresh`}},
		{"own limit's quantity", cfg(plans(fixed), "free", own(sluice.FixedWindow, 100)), cfg(plans(fixed), "free", own(sluice.FixedWindow, 200)), nil},
		{"the plan's limit changes", cfg(plans(fixed), "free"), cfg(plans(gcra), "free"),
			[]string{`plan "free": limit "per-minute" changes algorithm from fixed-window to gcra: every client's state of it starts afresh`}},
	} {
		got := reloadStateChanges(c.old, c.cur)
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s: the reload log says %q, want %q", c.name, got, c.want)
		}
	}
}

// A reload that moves a keys file's thousands of keys to a plan that
// counts otherwise logs the first maxKeyChanges lines of them and one that
// counts the rest, not a line per key.
func TestStateChangesOfManyKeysAreBounded(t *testing.T) {
	fixed := sluice.FixedWindow(10, time.Minute).Named("per-minute")
	gcra := sluice.GCRA(10, time.Minute).Named("per-minute")
	p := &httplimit.Policy{Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{fixed}}, {Name: "pro", Limits: []sluice.Limit{gcra}}}}
	old, cur := &config.Config{Policy: p, Keys: map[[32]byte]*config.Key{}}, &config.Config{Policy: p, Keys: map[[32]byte]*config.Key{}}
	for i := range 25 {
		h := [32]byte{byte(i + 1)}
		old.Keys[h] = &config.Key{Name: fmt.Sprintf("k%02d", i), Hash: h, Plan: p.Plan("free")}
		cur.Keys[h] = &config.Key{Name: fmt.Sprintf("k%02d", i), Hash: h, Plan: p.Plan("pro")}
	}
	got := reloadStateChanges(old, cur)
	if len(got) != maxKeyChanges+1 || got[0] != `key "k00": limit "per-minute" changes algorithm from fixed-window to gcra: every client's state of it starts afresh` ||
		got[maxKeyChanges] != "and 5 more changes of keys' limits, not listed" {
		t.Errorf("the reload log of 25 keys moved: %d lines, %q … %q", len(got), got[0], got[len(got)-1])
	}
}
