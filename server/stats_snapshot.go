package server

import (
	"cmp"
	"slices"
	"time"
)

// dashboardRange is a time range the dashboard shows: points of step
// seconds each, summed from the slots of one ring.
type dashboardRange struct {
	name   string
	fine   bool // from the ring of seconds, else from the ring of 10 s
	step   int64
	points int
}

// dashboardRanges are the ranges GET /dashboard/data?range= accepts; the
// first is the default.
var dashboardRanges = [...]dashboardRange{
	{"1m", true, 1, 60},
	{"15m", false, 10, 90},
	{"1h", false, 30, 120},
}

func findRange(name string) (dashboardRange, bool) {
	if name == "" {
		return dashboardRanges[0], true
	}
	for _, r := range dashboardRanges {
		if r.name == name {
			return r, true
		}
	}
	return dashboardRange{}, false
}

// dashboardData is the JSON the dashboard polls. Counts "in range" are of
// the range's points; totals are since the server started, and equal the
// counters of /metrics of the same name.
type dashboardData struct {
	Now   string `json:"now"`
	Range string `json:"range"`
	// Step is the seconds each point of Series covers; the last point is
	// the one in progress.
	Step   int64   `json:"step"`
	Series []point `json:"series"`
	// Rate is the last complete second's decisions and refusals.
	Rate struct {
		Decisions int64 `json:"decisions"`
		Refused   int64 `json:"refused"`
	} `json:"rate"`
	InRange counts `json:"inRange"`
	Totals  counts `json:"totals"`
	// Plans and Limits are sorted by refusals since start, most first;
	// TopLimited by the refusals its clients certainly got, most first,
	// and of as many, the one whose count is the surest (the least at
	// most) first: a client new to a full table, whose count is mostly
	// inherited, is not put above the others for what it inherited.
	Plans       []planRow  `json:"plans"`
	Limits      []limitRow `json:"limits"`
	TopLimited  []topRow   `json:"topLimited"`
	Store       storeView  `json:"store"`
	Degradation levelView  `json:"degradation"`
}

// counts are decisions (requests decided), refused (of them), undecided
// (requests no decision could be made for: sluice_undecided_total), store
// errors and fallback decisions (sluice_store_errors_total,
// sluice_fallback_decisions_total).
type counts struct {
	Decisions   int64 `json:"decisions"`
	Refused     int64 `json:"refused"`
	Undecided   int64 `json:"undecided"`
	StoreErrors int64 `json:"storeErrors"`
	Fallback    int64 `json:"fallback"`
}

// point is one point of a series: its start (Unix seconds), its counts and
// the highest degradation level seen in it (-1: not known). A point that
// ended before the server started has counts of -1 (not known), not 0: no
// traffic was counted then, which is not the same as none.
type point struct {
	At int64 `json:"t"`
	counts
	Level int `json:"level"`
}

type planRow struct {
	Plan      string `json:"plan"`
	Decisions int64  `json:"decisions"`
	Refused   int64  `json:"refused"`
	InRange   int64  `json:"refusedInRange"`
}

// topRow is a client of the most limited (see displayClient). Refused is
// the refusals since start it certainly got, AtMost the most it may have
// got: they differ for a client the full table took in in place of
// another, whose count it inherited (see topTable), and only the first is
// the client's own.
type topRow struct {
	Client  string `json:"client"`
	Plan    string `json:"plan"`
	Refused int64  `json:"refused"`
	AtMost  int64  `json:"refusedAtMost"`
}

// row returns e as the most limited show it.
func (e *topEntry) row() topRow {
	return topRow{Client: e.Client, Plan: e.Plan, Refused: e.certain(), AtMost: e.Count}
}

// compare orders the most limited: by the refusals certainly got, most
// first, and of as many, the surest count (the least at most) first.
func (a topRow) compare(b topRow) int {
	return cmp.Or(cmp.Compare(b.Refused, a.Refused), cmp.Compare(a.AtMost, b.AtMost))
}

type limitRow struct {
	Plan    string `json:"plan"`
	Limit   string `json:"limit"`
	Refused int64  `json:"refused"`
	InRange int64  `json:"refusedInRange"`
}

// storeView is the store's health: its kind ("memory" or "redis"), the
// breaker's state ("closed", "open", "half-open"; empty for memory), the
// policy for store errors, and its totals (in Totals).
type storeView struct {
	Kind         string `json:"kind"`
	Breaker      string `json:"breaker,omitempty"`
	OnStoreError string `json:"onStoreError,omitempty"`
}

type levelView struct {
	Level  int    `json:"level"`
	Name   string `json:"name"`
	Pinned bool   `json:"pinned"`
	Since  string `json:"since"`
}

func (t *tally) counts() counts {
	return counts{t.decisions, t.refused, t.undecided, t.storeErrors, t.fallback}
}

func (c *counts) add(o counts) {
	c.Decisions += o.Decisions
	c.Refused += o.Refused
	c.Undecided += o.Undecided
	c.StoreErrors += o.StoreErrors
	c.Fallback += o.Fallback
}

// snapshot returns the dashboard's data for rg, at most top clients. It
// holds the lock every decision's record takes only to copy the counts:
// the rows are sorted after it is released.
func (s *stats) snapshot(rg dashboardRange, top int) dashboardData {
	d := s.collect(rg)
	slices.SortFunc(d.Plans, func(a, b planRow) int {
		return cmp.Or(cmp.Compare(b.Refused, a.Refused), cmp.Compare(b.Decisions, a.Decisions), cmp.Compare(a.Plan, b.Plan))
	})
	slices.SortFunc(d.Limits, func(a, b limitRow) int {
		return cmp.Or(cmp.Compare(b.Refused, a.Refused), cmp.Compare(a.Plan, b.Plan), cmp.Compare(a.Limit, b.Limit))
	})
	slices.SortFunc(d.TopLimited, func(a, b topRow) int { return cmp.Or(a.compare(b), cmp.Compare(a.Client, b.Client)) })
	if len(d.TopLimited) > top {
		d.TopLimited = d.TopLimited[:top]
	}
	return d
}

// collect returns the dashboard's data for rg, its rows unsorted and every
// client of the top list.
func (s *stats) collect(rg dashboardRange) dashboardData {
	s.mu.Lock()
	defer s.mu.Unlock()
	sec, _, _ := s.now(true)
	d := dashboardData{Now: time.Unix(sec, 0).UTC().Format(time.RFC3339), Range: rg.name, Step: rg.step}
	if prev := s.fine.peek(sec - 1); prev != nil {
		d.Rate.Decisions, d.Rate.Refused = prev.decisions, prev.refused
	}
	r := &s.coarse
	if rg.fine {
		r = &s.fine
	}
	inRange := map[planLimit]int64{}
	last := sec - sec%rg.step
	level := -1
	for at := last - rg.step*int64(rg.points-1); at <= last; at += rg.step {
		p := point{At: at, Level: -1}
		if at+rg.step <= s.started {
			p.counts = counts{-1, -1, -1, -1, -1} // not known: before the start
			d.Series = append(d.Series, p)
			continue
		}
		for t := at; t < at+rg.step; t += r.width {
			sl := r.peek(t)
			if sl == nil {
				continue
			}
			p.add(sl.counts())
			p.Level = max(p.Level, sl.level)
			for k, n := range sl.refusals {
				inRange[k] += n
			}
		}
		if p.Level < 0 {
			p.Level = level // the last level seen holds until another is
		}
		level = p.Level
		d.InRange.add(p.counts)
		d.Series = append(d.Series, p)
	}
	d.Totals = s.total.counts()
	for k, n := range s.total.refusals {
		if k.limit == "" {
			continue
		}
		d.Limits = append(d.Limits, limitRow{Plan: k.plan, Limit: k.limit, Refused: n, InRange: inRange[k]})
	}
	for plan, n := range s.decided {
		k := planLimit{plan, ""}
		d.Plans = append(d.Plans, planRow{Plan: plan, Decisions: *n, Refused: s.total.refusals[k], InRange: inRange[k]})
	}
	for _, e := range s.top.bySubject {
		d.TopLimited = append(d.TopLimited, e.row())
	}
	return d
}
