package bench

import (
	"context"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// PlanPeriods are the periods of a plan's three limits, each Rate per
// period: per second, per minute and per day, as an API's plan has them.
var PlanPeriods = [3]time.Duration{time.Second, time.Minute, 24 * time.Hour}

// PlanPeers are the Peers deciding a plan of three limits on one key.
// sluice decides the three in one atomic Limiter.Allow call; every other
// library has no plans, so its row is three limiters of its own, one per
// period, checked one after another for the same key (as a service using
// it would write it, without the atomicity: a refusal by the third leaves
// the first two spent).
var PlanPeers = planPeers()

func planPeers() []Peer {
	ps := []Peer{
		{"plan3-sluice-gcra", "sluice memory.Store + Limiter.Allow, 3 GCRA limits in one call",
			func(c Config) Instance { return newSluicePlan(sluice.GCRA, c) }},
		{"plan3-sluice-tokenbucket", "sluice memory.Store + Limiter.Allow, 3 token buckets in one call",
			func(c Config) Instance { return newSluicePlan(sluice.TokenBucket, c) }},
	}
	for _, p := range Peers {
		if p.Name == "sluice-gcra" || p.Name == "sluice-tokenbucket" {
			continue
		}
		ps = append(ps, Peer{"plan3-" + p.Name, p.Lib + ", 3 limiters checked in turn", threeOf(p)})
	}
	return ps
}

// threeOf returns a constructor of p's plan: one instance per PlanPeriod.
func threeOf(p Peer) func(Config) Instance {
	return func(c Config) Instance {
		var t three
		for i, period := range PlanPeriods {
			t[i] = p.New(Config{MaxKeys: c.MaxKeys, Period: scaled(period, c)})
		}
		return &t
	}
}

// scaled returns period scaled by c.Period ÷ 1s.
func scaled(period time.Duration, c Config) time.Duration {
	return time.Duration(float64(period) * c.Period.Seconds())
}

type three [3]Instance

func (t *three) Worker() func(string) bool {
	a, b, c := t[0].Worker(), t[1].Worker(), t[2].Worker()
	return func(key string) bool { return a(key) && b(key) && c(key) }
}

func (t *three) Close() {
	for _, in := range t {
		in.Close()
	}
}

// newSluicePlan returns a sluice instance deciding the plan of
// PlanPeriods, each limit built by alg, in one call.
func newSluicePlan(alg func(int64, time.Duration) sluice.Limit, c Config) *sluiceInst {
	st := memory.New(memory.WithSweepInterval(0), memory.WithMaxKeys(3*c.MaxKeys))
	s := &sluiceInst{store: st, lim: sluice.NewLimiter(st)}
	for i, name := range [3]string{"per-second", "per-minute", "per-day"} {
		l := alg(Rate, scaled(PlanPeriods[i], c)).Named(name)
		if err := l.Err(); err != nil {
			panic(err)
		}
		s.plan = append(s.plan, sluice.Check{Limit: l, Cost: 1})
	}
	return s
}

// planWorker is Worker for an instance built by newSluicePlan.
func (s *sluiceInst) planWorker() func(string) bool {
	ctx := context.Background()
	var d sluice.Decision
	checks := append([]sluice.Check(nil), s.plan...)
	return func(key string) bool {
		for i := range checks {
			checks[i].Key = key
		}
		if err := s.lim.Allow(ctx, checks, &d); err != nil {
			panic(err)
		}
		return d.Allowed
	}
}
