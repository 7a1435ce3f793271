package failover

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/internal/storetest"
	"pgregory.net/rapid"
)

// transitions records a breaker's state changes.
type transitions struct {
	mu  sync.Mutex
	log []string
}

func (r *transitions) record(from, to BreakerState) {
	r.mu.Lock()
	r.log = append(r.log, from.String()+"→"+to.String())
	r.mu.Unlock()
}

func (r *transitions) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := ""
	for i, t := range r.log {
		if i > 0 {
			s += " "
		}
		s += t
	}
	return s
}

// newBreaker returns a closed breaker configured by opts.
func newBreaker(opts BreakerOptions) *breaker {
	return &breaker{opts: opts}
}

// call asks b for a ticket and, if it gets one, reports outcome.
func call(t *testing.T, b *breaker, success bool) bool {
	t.Helper()
	ticket, ok := b.Allow()
	if ok {
		b.Done(ticket, success)
	}
	return ok
}

func TestBreakerTransitions(t *testing.T) {
	const openFor = time.Second
	tests := []struct {
		name        string
		run         func(t *testing.T, b *breaker, clk *storetest.Clock)
		state       BreakerState
		transitions string
		opens       int64
	}{
		{
			name: "fewer consecutive failures than the threshold keep it closed",
			run: func(t *testing.T, b *breaker, clk *storetest.Clock) {
				for range 2 {
					call(t, b, false)
				}
			},
			state: BreakerClosed,
		},
		{
			name: "a success resets the count of consecutive failures",
			run: func(t *testing.T, b *breaker, clk *storetest.Clock) {
				call(t, b, false)
				call(t, b, false)
				call(t, b, true)
				call(t, b, false)
				call(t, b, false)
			},
			state: BreakerClosed,
		},
		{
			name: "the threshold of consecutive failures opens it and it refuses calls",
			run: func(t *testing.T, b *breaker, clk *storetest.Clock) {
				for range 3 {
					call(t, b, false)
				}
				clk.Advance(openFor - time.Nanosecond)
				if call(t, b, true) {
					t.Error("an open breaker let a call through before OpenFor")
				}
			},
			state: BreakerOpen, transitions: "closed→open", opens: 1,
		},
		{
			name: "after OpenFor one probe goes through and the others wait for it",
			run: func(t *testing.T, b *breaker, clk *storetest.Clock) {
				for range 3 {
					call(t, b, false)
				}
				clk.Advance(openFor)
				if _, ok := b.Allow(); !ok {
					t.Fatal("no probe after OpenFor")
				}
				for range 3 {
					if _, ok := b.Allow(); ok {
						t.Error("a second call went through while the probe was out")
					}
				}
			},
			state: BreakerHalfOpen, transitions: "closed→open open→half-open", opens: 1,
		},
		{
			name: "a successful probe closes it",
			run: func(t *testing.T, b *breaker, clk *storetest.Clock) {
				for range 3 {
					call(t, b, false)
				}
				clk.Advance(openFor)
				call(t, b, true)
				for range 10 {
					if !call(t, b, true) {
						t.Error("a closed breaker refused a call")
					}
				}
			},
			state: BreakerClosed, transitions: "closed→open open→half-open half-open→closed", opens: 1,
		},
		{
			name: "a failed probe opens it again for another OpenFor",
			run: func(t *testing.T, b *breaker, clk *storetest.Clock) {
				for range 3 {
					call(t, b, false)
				}
				clk.Advance(openFor)
				call(t, b, false)
				clk.Advance(openFor - time.Nanosecond)
				if call(t, b, true) {
					t.Error("re-opened breaker let a call through before OpenFor")
				}
			},
			state: BreakerOpen, transitions: "closed→open open→half-open half-open→open", opens: 2,
		},
		{
			name: "after a closed→open→closed cycle it counts failures from zero",
			run: func(t *testing.T, b *breaker, clk *storetest.Clock) {
				for range 3 {
					call(t, b, false)
				}
				clk.Advance(openFor)
				call(t, b, true)
				call(t, b, false)
				call(t, b, false)
			},
			state: BreakerClosed, transitions: "closed→open open→half-open half-open→closed", opens: 1,
		},
		{
			name: "a late success from before the opening does not close it",
			run: func(t *testing.T, b *breaker, clk *storetest.Clock) {
				slow, _ := b.Allow()
				for range 3 {
					call(t, b, false)
				}
				b.Done(slow, true)
			},
			state: BreakerOpen, transitions: "closed→open", opens: 1,
		},
		{
			name: "late failures from before the opening do not count after it closes",
			run: func(t *testing.T, b *breaker, clk *storetest.Clock) {
				var slow []ticket
				for range 5 {
					tk, _ := b.Allow()
					slow = append(slow, tk)
				}
				for range 3 {
					call(t, b, false)
				}
				clk.Advance(openFor)
				call(t, b, true)
				for _, tk := range slow {
					b.Done(tk, false)
				}
			},
			state: BreakerClosed, transitions: "closed→open open→half-open half-open→closed", opens: 1,
		},
		{
			name: "a released probe lets the next call probe at once",
			run: func(t *testing.T, b *breaker, clk *storetest.Clock) {
				for range 3 {
					call(t, b, false)
				}
				clk.Advance(openFor)
				probe, _ := b.Allow()
				b.abandon(probe)
				if !call(t, b, true) {
					t.Error("no new probe after the first was released")
				}
			},
			state: BreakerClosed, transitions: "closed→open open→half-open half-open→closed", opens: 1,
		},
		{
			name: "a probe unanswered for OpenFor is replaced and its late answer ignored",
			run: func(t *testing.T, b *breaker, clk *storetest.Clock) {
				for range 3 {
					call(t, b, false)
				}
				clk.Advance(openFor)
				lost, _ := b.Allow()
				clk.Advance(openFor)
				second, ok := b.Allow()
				if !ok {
					t.Fatal("no new probe after the first was lost for OpenFor")
				}
				b.Done(lost, true) // stale: must not close
				if got := b.State(); got != BreakerHalfOpen {
					t.Errorf("after the lost probe's late success: %v, want half-open", got)
				}
				b.Done(second, false)
			},
			state: BreakerOpen, transitions: "closed→open open→half-open half-open→open", opens: 2,
		},
		{
			name: "the zero ticket permits nothing",
			run: func(t *testing.T, b *breaker, clk *storetest.Clock) {
				for range 10 {
					b.Done(ticket{}, false)
				}
				b.abandon(ticket{})
			},
			state: BreakerClosed,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := storetest.NewClock()
			var rec transitions
			b := newBreaker(BreakerOptions{
				Failures: 3, OpenFor: openFor, Clock: clk.Now, OnStateChange: rec.record,
			})
			tt.run(t, b, clk)
			if got := b.State(); got != tt.state {
				t.Errorf("state %v, want %v", got, tt.state)
			}
			if got := rec.String(); got != tt.transitions {
				t.Errorf("transitions %q, want %q", got, tt.transitions)
			}
			if got := b.Opens(); got != tt.opens {
				t.Errorf("Opens() = %d, want %d", got, tt.opens)
			}
		})
	}
}

func TestBreakerZeroValueUsesDefaults(t *testing.T) {
	var b breaker
	if b.OpenFor() != DefaultBreakerOpenFor {
		t.Errorf("OpenFor() = %v, want %v", b.OpenFor(), DefaultBreakerOpenFor)
	}
	for i := range DefaultBreakerFailures {
		if b.State() != BreakerClosed {
			t.Fatalf("open after %d failures, want %d", i, DefaultBreakerFailures)
		}
		call(t, &b, false)
	}
	if b.State() != BreakerOpen {
		t.Fatalf("state %v after %d failures, want open", b.State(), DefaultBreakerFailures)
	}
}

func TestBreakerStateString(t *testing.T) {
	for s, want := range map[BreakerState]string{
		BreakerClosed: "closed", BreakerOpen: "open", BreakerHalfOpen: "half-open", 7: "breaker-state(7)",
	} {
		if s.String() != want {
			t.Errorf("%d.String() = %q, want %q", uint8(s), s.String(), want)
		}
	}
}

// Whatever the calls, outcomes and clock do: transitions follow the cycle,
// Opens counts the openings, a closed breaker lets every call through, an
// open one none before OpenFor, and a half-open one at most one probe per
// OpenFor unless the probe was released.
func TestPropertyBreakerCycle(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		const openFor = 100 * time.Millisecond
		failures := rapid.IntRange(1, 4).Draw(rt, "failures")
		clk := storetest.NewClock()
		var (
			log      []string
			openedAt time.Time
			toOpen   int64
		)
		b := newBreaker(BreakerOptions{
			Failures: failures, OpenFor: openFor, Clock: clk.Now,
			OnStateChange: func(from, to BreakerState) {
				log = append(log, from.String()+"→"+to.String())
				if to == BreakerOpen {
					openedAt = clk.Now()
					toOpen++
				}
			},
		})
		valid := map[string]bool{"closed→open": true, "open→half-open": true, "half-open→closed": true, "half-open→open": true}
		type held struct {
			tk    ticket
			gen   int // len(log) when issued: a transition since makes it stale
			probe int // its probe number, 0 if not a probe
		}
		var (
			tickets   []held
			probes    int // probes sent so far; the latest is the live one
			probeAt   time.Time
			probeLive bool
			streak    int // consecutive fresh failures while closed
		)
		for range rapid.IntRange(1, 200).Draw(rt, "steps") {
			before := b.State()
			switch rapid.IntRange(0, 3).Draw(rt, "op") {
			case 0: // a call starts
				tk, ok := b.Allow()
				switch before {
				case BreakerClosed:
					if !ok {
						rt.Fatal("closed breaker refused a call")
					}
				case BreakerOpen:
					if ok != (clk.Now().Sub(openedAt) >= openFor) {
						rt.Fatalf("open breaker: Allow %v %v after opening", ok, clk.Now().Sub(openedAt))
					}
				case BreakerHalfOpen:
					if ok && probeLive && clk.Now().Sub(probeAt) < openFor {
						rt.Fatal("second probe while one is out")
					}
				}
				if !ok {
					continue
				}
				h := held{tk: tk, gen: len(log)}
				if b.State() == BreakerHalfOpen {
					probes++
					h.probe = probes
					probeAt, probeLive = clk.Now(), true
				}
				tickets = append(tickets, h)
			case 1, 2: // a call ends
				if len(tickets) == 0 {
					continue
				}
				j := rapid.IntRange(0, len(tickets)-1).Draw(rt, "ticket")
				h := tickets[j]
				tickets = append(tickets[:j], tickets[j+1:]...)
				fresh := h.gen == len(log) && (h.probe == 0 || h.probe == probes)
				if rapid.IntRange(0, 9).Draw(rt, "release") == 0 {
					b.abandon(h.tk)
					if fresh && h.probe != 0 {
						probeLive = false
					}
					continue
				}
				ok := rapid.Bool().Draw(rt, "success")
				b.Done(h.tk, ok)
				switch {
				case !fresh:
					if b.State() != before {
						rt.Fatalf("a stale ticket moved the breaker from %v to %v", before, b.State())
					}
				case before == BreakerClosed && ok:
					streak = 0
				case before == BreakerClosed:
					streak++
					if want := streak >= failures; (b.State() == BreakerOpen) != want {
						rt.Fatalf("after %d consecutive failures (threshold %d): %v", streak, failures, b.State())
					}
				case before == BreakerHalfOpen:
					want := map[bool]BreakerState{true: BreakerClosed, false: BreakerOpen}[ok]
					if b.State() != want {
						rt.Fatalf("probe success=%v left the breaker %v, want %v", ok, b.State(), want)
					}
				}
				if b.State() != before {
					streak, probeLive = 0, false
				}
			case 3:
				clk.Advance(time.Duration(rapid.Int64Range(0, int64(2*openFor)).Draw(rt, "advance")))
			}
		}
		for _, tr := range log {
			if !valid[tr] {
				rt.Fatalf("invalid transition %s in %v", tr, log)
			}
		}
		if b.Opens() != toOpen {
			rt.Fatalf("Opens() = %d, observed %d openings", b.Opens(), toOpen)
		}
	})
}

// Many goroutines calling at once: no race, and Opens matches the openings.
func TestBreakerConcurrent(t *testing.T) {
	var opened atomic.Int64
	b := newBreaker(BreakerOptions{
		Failures: 3, OpenFor: time.Microsecond,
		OnStateChange: func(_, to BreakerState) {
			if to == BreakerOpen {
				opened.Add(1)
			}
		},
	})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				if tk, ok := b.Allow(); ok {
					switch (g + i) % 7 {
					case 0:
						b.abandon(tk)
					case 1, 2, 3:
						b.Done(tk, false)
					default:
						b.Done(tk, true)
					}
				}
				_ = b.State()
			}
		}()
	}
	wg.Wait()
	if b.Opens() != opened.Load() {
		t.Errorf("Opens() = %d, observed %d", b.Opens(), opened.Load())
	}
}
