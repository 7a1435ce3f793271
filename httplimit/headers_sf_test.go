package httplimit

import (
	"net/http"
	"testing"
	"time"

	"github.com/dunglas/httpsfv"
	"pgregory.net/rapid"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/quota"
)

// maxSFInteger is the largest sf-integer (RFC 8941: 15 digits).
const maxSFInteger = 999_999_999_999_999

// The RateLimit values are written without building httpsfv values, on
// every response; these properties hold the fast writers to what httpsfv
// writes, for any printable name (quotes and backslashes included, which
// valid limit names never have) and any values an sf-integer holds.
func TestFastRateLimitValuesAreWhatHTTPSFVWrites(t *testing.T) {
	t.Run("ietf", func(t *testing.T) {
		rapid.Check(t, func(rt *rapid.T) {
			n := rapid.IntRange(1, sluice.MaxChecks).Draw(rt, "limits")
			checks := make([]sluice.Check, n)
			statuses := make([]sluice.Status, n)
			var list httpsfv.List
			for i := range n {
				name := rapid.StringMatching(`[ -~]{1,64}`).Draw(rt, "name")
				alg := rapid.SampledFrom(append(sluice.Algorithms(), sluice.AlgorithmConcurrency)).Draw(rt, "algorithm")
				checks[i].Limit = sluice.NewLimit(alg, 1, time.Second).Named(name)
				statuses[i].Remaining = rapid.Int64Range(0, maxSFInteger).Draw(rt, "remaining")
				statuses[i].ResetAfter = time.Duration(rapid.Int64Range(0, int64(sluice.Never)).Draw(rt, "reset"))
				it := httpsfv.NewItem(name)
				it.Params.Add("r", statuses[i].Remaining)
				if qt := quota.Of(checks[i].Limit); qt.W > 0 { // concurrency has no t
					it.Params.Add("t", qt.Seconds(statuses[i].Remaining, statuses[i].ResetAfter, 0))
				}
				list = append(list, it)
			}
			want, err := httpsfv.Marshal(list)
			if err != nil {
				rt.Fatal(err)
			}
			if got := string(appendIETF(nil, checks, statuses, nil, nil, nil)); got != want {
				rt.Fatalf("appendIETF wrote %q, httpsfv %q", got, want)
			}
			limits := make([]sluice.Limit, n)
			for i := range checks {
				limits[i] = checks[i].Limit
			}
			ph, err := newPolicyHeaders(limits, nil, &statedLimits{})
			if err != nil {
				return // httpsfv refuses the name in RateLimit-Policy: no plan has it
			}
			if got := string(appendIETF(nil, checks, statuses, ph.items, ph.quotas, nil)); got != want {
				rt.Fatalf("appendIETF with the plan's items wrote %q, httpsfv %q", got, want)
			}
		})
	})
	t.Run("draft-7", func(t *testing.T) {
		rapid.Check(t, func(rt *rapid.T) {
			limit := rapid.Int64Range(0, maxSFInteger).Draw(rt, "limit")
			remaining := rapid.Int64Range(0, maxSFInteger).Draw(rt, "remaining")
			reset := rapid.Int64Range(0, maxSFInteger).Draw(rt, "reset")
			d := httpsfv.NewDictionary()
			d.Add("limit", httpsfv.NewItem(limit))
			d.Add("remaining", httpsfv.NewItem(remaining))
			d.Add("reset", httpsfv.NewItem(reset))
			want, err := httpsfv.Marshal(d)
			if err != nil {
				rt.Fatal(err)
			}
			if got := string(appendDraft7(nil, limit, remaining, reset)); got != want {
				rt.Fatalf("appendDraft7 wrote %q, httpsfv %q", got, want)
			}
		})
	})
	t.Run("ceilSeconds fits an sf-integer", func(t *testing.T) {
		if s := quota.CeilSeconds(sluice.Never); s > maxSFInteger {
			t.Fatalf("quota.CeilSeconds(Never) = %d", s)
		}
		if sluice.MaxQuantity > maxSFInteger {
			t.Fatalf("MaxQuantity %d is no sf-integer", int64(sluice.MaxQuantity))
		}
	})
}

// Every mode's values share one buffer and one backing array; with all
// the modes configured, each header is what that mode alone writes, and
// appending to one header's values leaves the others alone.
func TestHeaderModesTogetherWriteWhatEachWritesAlone(t *testing.T) {
	build := func(modes ...string) *Middleware {
		m, err := New(sluice.NewLimiter(nil), Options{
			Plans: []*Plan{{Name: "free", Limits: []sluice.Limit{
				sluice.FixedWindow(100, time.Minute), sluice.SlidingCounter(1000, 24*time.Hour)}}},
			Headers: modes,
		})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	plan := func(m *Middleware) *Plan { return m.policy.Plan("free") }
	result := func(m *Middleware) *Result {
		p := plan(m)
		res := &Result{Identity: Identity{Plan: p}, Now: time.Unix(1_800_000_000, 5)}
		res.Checks = m.policy.Checks(nil, p, "key:x", 1)
		res.Decision = sluice.Decision{Allowed: true, Limit: p.Limits[0], Remaining: 41, ResetAfter: 1500 * time.Millisecond,
			Statuses: []sluice.Status{{Allowed: true, Remaining: 41, ResetAfter: 1500 * time.Millisecond},
				{Allowed: true, Remaining: 958, ResetAfter: 40 * time.Second}}}
		return res
	}
	all := http.Header{}
	m := build(ModeIETF, ModeDraft6, ModeLegacy)
	m.WriteHeaders(all, result(m))
	for _, mode := range []string{ModeIETF, ModeDraft6, ModeLegacy} {
		alone := http.Header{}
		m := build(mode)
		m.WriteHeaders(alone, result(m))
		for name, v := range alone {
			if name == "Ratelimit-Policy" && mode == ModeDraft6 {
				continue // beside ietf, the ietf one
			}
			if got := all[name]; len(got) != 1 || got[0] != v[0] {
				t.Errorf("%s: %s = %q with every mode, %q alone", mode, name, got, v)
			}
		}
	}
	before := all.Clone()
	for name := range all {
		all[name] = append(all[name], "appended")
	}
	for name, v := range before {
		if all[name][0] != v[0] {
			t.Errorf("appending to a header changed %s from %q to %q", name, v[0], all[name][0])
		}
	}
}
