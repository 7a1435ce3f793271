package degrade

import (
	"math"
	"math/rand/v2"
	"runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// reservoirSize bounds the latencies kept per window: beyond it, each
// latency replaces one kept at random (reservoir sampling), so that those
// kept are a uniform sample of the window's, whose p99 estimates the
// window's at a fixed cost (see Signals.P99).
const reservoirSize = 4096

// Monitor measures the signals of a server: requests in flight, latency and
// errors over a window (between two Sample calls), the store's health, the
// Go scheduler's latency, and the CPU and memory used of what the process
// may use (cgroup-aware). It is safe for concurrent use. The zero Monitor
// measures as NewMonitor(nil)'s does.
type Monitor struct {
	inFlight  atomic.Int64
	storeDown func() bool
	clock     func() time.Time // nil: time.Now
	once      sync.Once        // makes res and sample for the zero Monitor
	res       *resources

	mu                       sync.Mutex
	lat                      []time.Duration
	seen                     int64
	total, failed, abandoned int64

	schedMu   sync.Mutex
	sample    []metrics.Sample
	schedPrev []uint64
}

// MonitorConfig configures a Monitor. The zero MonitorConfig measures as
// NewMonitor(nil) does.
type MonitorConfig struct {
	// StoreDown, if not nil, reports whether the limiter's store is
	// unreachable.
	StoreDown func() bool
	// Clock is the time a request's latency is measured with, from Begin
	// (or Start) to its end, its pauses (Request.Pause) too; nil reads
	// time.Now, whose readings measure on the monotonic clock. A latency
	// the clock reads as negative (it went back between two readings)
	// counts as 0. The CPU share is measured
	// over windows of time.Now whatever Clock is: it is of the kernel's
	// counts of CPU time, which run on the real clock.
	Clock func() time.Time
}

// NewMonitor returns a monitor; storeDown, if not nil, reports whether the
// limiter's store is unreachable. It is NewMonitorWith of a MonitorConfig
// of storeDown alone.
func NewMonitor(storeDown func() bool) *Monitor {
	return NewMonitorWith(MonitorConfig{StoreDown: storeDown})
}

// NewMonitorWith returns a monitor configured by cfg.
func NewMonitorWith(cfg MonitorConfig) *Monitor {
	m := &Monitor{storeDown: cfg.StoreDown, clock: cfg.Clock, lat: make([]time.Duration, 0, reservoirSize)}
	m.ready()
	return m
}

// now is the time latencies are measured with.
func (m *Monitor) now() time.Time {
	if m.clock == nil {
		return time.Now()
	}
	return m.clock()
}

// ready makes what the monitor reads the process's resources and the
// scheduler's latency with, once, and reads them: the first window of the
// CPU share and the scheduler's latency starts then.
func (m *Monitor) ready() {
	m.once.Do(func() {
		m.res = newResources()
		m.sample = []metrics.Sample{{Name: "/sched/latencies:seconds"}}
		m.res.read(time.Now())
		m.schedP99()
	})
}

// Begin counts a request in flight and returns the function that ends it
// with the status of the upstream's response: Start's Request's End.
func (m *Monitor) Begin() (end func(status int)) { return m.Start().End }

// Start counts a request in flight, its latency measured from now (less
// its pauses: see Request.Pause), until its End.
func (m *Monitor) Start() *Request {
	m.inFlight.Add(1)
	return &Request{m: m, start: m.now()}
}

// A Request is a request a Monitor counts in flight, from Monitor.Start to
// its End. Its methods are safe for concurrent use.
type Request struct {
	m      *Monitor
	mu     sync.Mutex
	start  time.Time
	paused time.Duration // the pauses ended, in all
	since  time.Time     // the start of the pause open, with pauses > 0
	pauses int           // the pauses open
	ended  bool
}

// Pause stops the request's latency until the matching Resume: the time
// between them is a wait that is not the upstream's, as a read of the
// client's request body is (the client's upload, which the upstream waits
// for). Pauses may overlap: the latency stands still while any is open,
// and a pause still open at End ends there. After End, Pause and Resume do
// nothing; so does a Resume without a Pause.
func (r *Request) Pause() {
	r.mu.Lock()
	if !r.ended {
		if r.pauses == 0 {
			r.since = r.m.now()
		}
		r.pauses++
	}
	r.mu.Unlock()
}

// Resume ends a pause (see Pause).
func (r *Request) Resume() {
	r.mu.Lock()
	if !r.ended && r.pauses > 0 {
		if r.pauses--; r.pauses == 0 {
			r.paused += max(r.m.now().Sub(r.since), 0)
		}
	}
	r.mu.Unlock()
}

// Abandoned is the status to End a request with whose client gave up on
// it before the upstream's answer started: the client left, or the call's
// own deadline passed (a gRPC or Connect call's). Its latency, up to then,
// is a lower bound of the upstream's, which no client can stretch past
// what the upstream took: a latency of the window's P99 (nginx logs it as
// the $upstream_response_time of a 499), so that an upstream slower than
// every client's patience still shows in it. Its outcome is its client's,
// neither a success nor a failure: it is no answer (Signals.Abandoned).
const Abandoned = -1

// End ends the request with the status of the upstream's response, its
// latency the time since Start less its pauses. Status 0 says the
// response was not the upstream's (a refusal the server made itself: a
// 429, the 503 of a degraded level), or not its outcome: the request
// leaves the in-flight count but its latency and status are not the
// upstream's health, and counting them would let the server's own refusals
// hold its level up. Status Abandoned counts its latency, not its outcome.
// End is safe to call more than once: the first call ends the request,
// later ones do nothing.
func (r *Request) End(status int) {
	r.mu.Lock()
	if r.ended {
		r.mu.Unlock()
		return
	}
	r.ended = true
	m := r.m
	now := m.now()
	if r.pauses > 0 {
		r.paused += max(now.Sub(r.since), 0)
	}
	d := max(now.Sub(r.start)-r.paused, 0)
	r.mu.Unlock()
	m.inFlight.Add(-1)
	if status == 0 {
		return
	}
	m.mu.Lock()
	switch {
	case status == Abandoned:
		m.abandoned++
	case status >= 500:
		m.total++
		m.failed++
	default:
		m.total++
	}
	m.seen++
	if len(m.lat) < reservoirSize {
		m.lat = append(m.lat, d)
	} else if i := rand.Int64N(m.seen); i < reservoirSize {
		m.lat[i] = d
	}
	m.mu.Unlock()
}

// Failed turns one request that Begin's end (a Request's End) counted as
// answered by the upstream into a failure: for an outcome known only after
// the answer started, as a gRPC call's status is, in its trailers. Call it
// at most once per request, after its end, and only for a status that end
// counted.
// The failure counts in the window it comes in, whichever window counted
// the answer: a window's error rate is its failures over the larger of its
// answers and its failures.
func (m *Monitor) Failed() {
	m.mu.Lock()
	m.failed++
	m.mu.Unlock()
}

// InFlight returns the requests being served now.
func (m *Monitor) InFlight() int64 { return m.inFlight.Load() }

// Sample returns the signals of the window since the previous Sample (the
// first: since the monitor was made) and starts a new window. A CPU count
// that cannot be read (the cgroup's, or the host's without one) makes the
// window's CPU unknown (Signals.CPUUnknown), not 0: an idle process's
// share; so does a Sample before any window of at least 100 ms could be
// measured (one at once after the monitor was made).
func (m *Monitor) Sample() Signals {
	m.ready()
	s := Signals{InFlight: m.inFlight.Load()}
	m.mu.Lock()
	lat := slices.Clone(m.lat)
	// A late failure (Failed) may be of an answer an earlier window
	// counted: the window's outcomes are then at least its failures.
	s.Answers, s.Failures, s.Abandoned = m.total, m.failed, m.abandoned
	if m.failed > 0 {
		s.ErrorRate = float64(m.failed) / float64(max(m.total, m.failed))
	}
	m.lat, m.seen, m.total, m.failed, m.abandoned = m.lat[:0], 0, 0, 0, 0
	m.mu.Unlock()
	if n := len(lat); n > 0 {
		slices.Sort(lat)
		s.P99 = lat[(n*99+99)/100-1] // the ⌈0.99·n⌉-th smallest
	}
	if m.storeDown != nil {
		s.StoreDown = m.storeDown()
	}
	s.SchedP99 = m.schedP99()
	s.CPU, s.Memory = m.res.read(time.Now())
	s.MemoryUnlimited = m.res.memoryUnlimited()
	if math.IsNaN(s.CPU) {
		s.CPU, s.CPUUnknown = 0, true
	}
	return s
}

// schedP99 reads the scheduler latency histogram and returns the p99 of
// what was added since the previous read.
func (m *Monitor) schedP99() time.Duration {
	m.schedMu.Lock()
	defer m.schedMu.Unlock()
	metrics.Read(m.sample)
	if m.sample[0].Value.Kind() != metrics.KindFloat64Histogram {
		return 0
	}
	h := m.sample[0].Value.Float64Histogram()
	prev := m.schedPrev
	m.schedPrev = slices.Clone(h.Counts)
	if len(prev) != len(h.Counts) {
		return 0
	}
	return histP99(prev, h.Counts, h.Buckets)
}

// histP99 returns the p99 of what a runtime/metrics time histogram (counts
// of buckets whose boundaries, in seconds, are buckets) added since prev:
// the upper boundary of the bucket holding the 99th percentile's rank; 0
// when fewer than minP99Samples were added (of fewer, the p99 is the
// largest). A rank in a bucket without a finite upper
// boundary is its lower boundary, and a boundary beyond time.Duration's
// range is its largest value.
func histP99(prev, counts []uint64, buckets []float64) time.Duration {
	var total uint64
	delta := make([]uint64, len(counts))
	for i := range counts {
		delta[i] = counts[i] - prev[i]
		total += delta[i]
	}
	if total < minP99Samples {
		return 0
	}
	want := total - total/100 // the 99th percentile's rank
	var acc uint64
	for i, n := range delta {
		acc += n
		if acc >= want {
			bound := buckets[i+1]
			if math.IsInf(bound, 1) {
				bound = buckets[i]
			}
			return secondsDuration(bound)
		}
	}
	return 0
}

// secondsDuration converts s seconds to a Duration, saturating at 0 and at
// time.Duration's largest value.
func secondsDuration(s float64) time.Duration {
	switch ns := s * float64(time.Second); {
	case !(ns > 0):
		return 0
	case ns >= math.MaxInt64:
		return math.MaxInt64
	default:
		return time.Duration(ns)
	}
}
