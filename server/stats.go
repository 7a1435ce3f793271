package server

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"time"

	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/httplimit"
)

// stats keeps what the dashboard shows: the decisions of the last hour in
// time slots (each second of the last minute, each 10 seconds of the last
// hour), what they refused by plan and limit, the totals since the stats
// were made, and the most limited clients (named or pseudonymous, bounded;
// see displayClient). The store's counters and the degradation level are
// sampled by the first decision of each second and by every snapshot.
// stats is safe for concurrent use.
type stats struct {
	clock func() time.Time
	// sample reads the store's counters and the degradation level; nil
	// reads nothing (always healthy, level 0).
	sample func() sample
	// clientKey keys the clients' pseudonyms: random, drawn when the stats
	// are made, never shown or stored, so a pseudonym cannot be recomputed
	// from a guessed subject outside this process.
	clientKey [32]byte
	// started is the Unix second the stats were made in: of the time
	// before it, nothing is known.
	started int64

	mu     sync.Mutex
	fine   ring // one slot a second, the last minute
	coarse ring // one slot per 10 s, the last hour
	total  tally
	// sampled is the last sample taken, and sampledAt its Unix second
	// (-1: none yet); fineNow and coarseNow are that second's slots.
	sampled            sample
	sampledAt          int64
	fineNow, coarseNow *slot
	// decided counts each plan's decisions since start (at most maxNames
	// plans); byPlan finds a plan's counter without hashing its name (at
	// most maxNames entries: plans of many reloads empty it).
	decided map[string]*int64
	byPlan  map[*httplimit.Plan]*int64
	top     topTable
}

// sample is what stats reads from outside the decisions: the store's
// cumulative errors and fallback decisions, and the degradation level.
type sample struct {
	storeErrors, fallback int64
	level                 int
}

// tally counts decisions. refusals is keyed by plan and limit; a key with
// an empty limit counts the plan's refused requests (one per request, however
// many of its limits refused it).
type tally struct {
	decisions, refused, undecided, storeErrors, fallback int64
	refusals                                             map[planLimit]int64
}

type planLimit struct{ plan, limit string }

// maxNames bounds the (plan, limit) pairs a tally keeps: names come from
// the configuration, so this is reached only across many reloads.
const maxNames = 1024

func (t *tally) refuse(k planLimit) {
	if t.refusals == nil {
		t.refusals = map[planLimit]int64{}
	}
	if len(t.refusals) < maxNames || t.refusals[k] > 0 {
		t.refusals[k]++
	}
}

// slot is one time slot of a ring: its tally and the highest degradation
// level sampled in it (-1: none was).
type slot struct {
	at    int64 // Unix second the slot starts at
	level int
	tally
}

// ring holds the last len(slots) slots of width seconds each.
type ring struct {
	width int64
	slots []slot
}

func newRing(width int64, n int) ring {
	r := ring{width: width, slots: make([]slot, n)}
	for i := range r.slots {
		r.slots[i] = slot{at: -1, level: -1}
	}
	return r
}

// at returns the slot holding Unix second sec, emptied if it held an older
// time.
func (r *ring) at(sec int64) *slot {
	start := sec - sec%r.width
	sl := &r.slots[(start/r.width)%int64(len(r.slots))]
	if sl.at != start {
		clear(sl.refusals)
		*sl = slot{at: start, level: -1, tally: tally{refusals: sl.refusals}}
	}
	return sl
}

// peek returns the slot starting at start, or nil if the ring holds no
// decision of that time.
func (r *ring) peek(start int64) *slot {
	sl := &r.slots[(start/r.width)%int64(len(r.slots))]
	if sl.at != start {
		return nil
	}
	return sl
}

type topEntry struct {
	Client string `json:"client"` // see displayClient
	Plan   string `json:"plan"`
	Count  int64  `json:"refused"`
	// subject is the client's, index its place in topTable's heap;
	// inherited is the count it took over coming into a full table (see
	// topTable), 0 if it came into one with room.
	subject   string
	index     int
	inherited int64
}

// certain returns the refusals e's client certainly got since the start:
// its Count less the count it inherited. It is at least 1, and equals
// Count for a client the table has held since its first refusal.
func (e *topEntry) certain() int64 { return e.Count - e.inherited }

// topCapacity bounds the clients tracked for the top list (see topTable).
const topCapacity = 512

// newStats returns empty stats on clock; sample, if not nil, reads the
// store's counters and the degradation level.
func newStats(clock func() time.Time, sample func() sample) *stats {
	s := &stats{clock: clock, sample: sample, fine: newRing(1, 60), coarse: newRing(10, 360),
		sampledAt: -1, decided: map[string]*int64{}, byPlan: map[*httplimit.Plan]*int64{}}
	rand.Read(s.clientKey[:]) // never fails (crypto/rand)
	s.started = clock().Unix()
	return s
}

// now returns the current Unix second and its two slots, after taking the
// second's sample if it has not been taken (or always, when force). s.mu
// must be held.
func (s *stats) now(force bool) (int64, *slot, *slot) {
	sec := s.clock().Unix()
	if sec == s.sampledAt && !force {
		return sec, s.fineNow, s.coarseNow
	}
	fine, coarse := s.fine.at(sec), s.coarse.at(sec)
	s.fineNow, s.coarseNow, s.sampledAt = fine, coarse, sec
	if s.sample != nil {
		cur := s.sample()
		dErr := max(cur.storeErrors-s.sampled.storeErrors, 0)
		dFall := max(cur.fallback-s.sampled.fallback, 0)
		for _, t := range []*tally{&fine.tally, &coarse.tally, &s.total} {
			t.storeErrors += dErr
			t.fallback += dFall
		}
		s.sampled = cur
	}
	fine.level, coarse.level = max(fine.level, s.sampled.level), max(coarse.level, s.sampled.level)
	return sec, fine, coarse
}

// levelChanged marks level l as reached now, so that a level held while
// nothing is decided and no one polls is drawn where it held.
func (s *stats) levelChanged(l int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, fine, coarse := s.now(false)
	fine.level, coarse.level = max(fine.level, l), max(coarse.level, l)
}

// countPlan counts a decision of plan p. s.mu must be held.
func (s *stats) countPlan(p *httplimit.Plan) {
	if n := s.byPlan[p]; n != nil {
		*n++
		return
	}
	n := s.planCounter(p.Name)
	if n == nil {
		return
	}
	if len(s.byPlan) >= maxNames {
		clear(s.byPlan)
	}
	s.byPlan[p] = n
	*n++
}

// planCounter returns the counter of the plan named name, nil when
// maxNames plans are counted already. s.mu must be held.
func (s *stats) planCounter(name string) *int64 {
	n := s.decided[name]
	if n == nil && len(s.decided) < maxNames {
		n = new(int64)
		s.decided[name] = n
	}
	return n
}

func (s *stats) recordError() {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, fine, coarse := s.now(false)
	for _, t := range []*tally{&fine.tally, &coarse.tally, &s.total} {
		t.undecided++
	}
}

// record counts a decision of the middleware as sluice_decisions_total
// does: a refused request under each limit that refused it (shadow limits
// never refuse). A check no store decided (Unavailable: a failover's deny
// while its store cannot be reached) is no limit's refusal: a request
// refused by such checks alone counts as a decision, not as refused, and
// does not put its client among the most limited (the store's errors and
// fallback decisions show the outage).
func (s *stats) record(res *httplimit.Result) {
	var buf [8]string
	refusedBy := buf[:0]
	if d := &res.Decision; !d.Allowed {
		for i := range res.Checks {
			if l := &res.Checks[i].Limit; !l.Shadow() && !d.Statuses[i].Allowed && !d.Statuses[i].Unavailable {
				refusedBy = append(refusedBy, l.Name())
			}
		}
	}
	// A refused decision has an enforcing check refused: none is a
	// limit's when every one of them is Unavailable.
	refused := !res.Decision.Allowed && len(refusedBy) > 0
	s.mu.Lock()
	defer s.mu.Unlock()
	s.countPlan(res.Identity.Plan)
	s.count(res.Identity.Plan.Name, refused, refusedBy)
	if refused {
		s.recordClient(res.Identity)
	}
}

// recordEnvoy counts a decision of the Envoy service as
// sluice_decisions_total does: the domain in place of the plan, a refused
// request under each descriptor's limit that refused it (not one refused
// because the store could not be reached: see record). A domain is
// counted as a plan only when a rule limited one of its descriptors: the
// domain is the caller's to name, and one no rule configures (answered OK,
// nothing decided) would otherwise take a row of the plans, which are
// bounded.
func (s *stats) recordEnvoy(res *envoy.Result) {
	var buf [8]string
	refusedBy := buf[:0]
	limited := false
	for _, o := range res.Descriptors {
		limited = limited || o.Limit != ""
		if o.Result == resultLimited && !o.Unavailable {
			refusedBy = append(refusedBy, o.Limit)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !limited {
		s.count("", false, nil) // a decision, of no plan
		return
	}
	if n := s.planCounter(res.Domain); n != nil {
		*n++
	}
	s.count(res.Domain, !res.Allowed && len(refusedBy) > 0, refusedBy)
}

// count counts a decision under plan in the current slots and the totals,
// refused or not, with the limits that refused it. s.mu must be held.
func (s *stats) count(plan string, refused bool, refusedBy []string) {
	_, fine, coarse := s.now(false)
	for _, t := range [...]*tally{&fine.tally, &coarse.tally, &s.total} {
		t.decisions++
		if !refused {
			continue
		}
		t.refused++
		t.refuse(planLimit{plan, ""})
		for _, l := range refusedBy {
			t.refuse(planLimit{plan, l})
		}
	}
}

// recordClient counts a refusal of id in the top list. s.mu must be held.
func (s *stats) recordClient(id httplimit.Identity) {
	s.top.refuse(id.Subject, func() (string, string) { return s.displayClient(id), id.Plan.Name })
}

// displayClient shows a client without revealing it: a configured API key
// that has a name by its kind and name ("api-key:free-tier"), any other
// client by its kind and a pseudonym, the first 6 bytes of
// HMAC-SHA256(clientKey, subject) in hex ("ip:3f09a1c2e4b7"). The same
// subject has the same pseudonym for the life of the stats, and another
// under other stats (another process); without the key, a pseudonym says
// nothing of its subject, even to whoever can try every candidate subject
// (every address of a /24).
func (s *stats) displayClient(id httplimit.Identity) string {
	if id.KeyName != "" {
		return id.Kind + ":" + id.KeyName
	}
	m := hmac.New(sha256.New, s.clientKey[:])
	m.Write([]byte(id.Subject))
	return id.Kind + ":" + hex.EncodeToString(m.Sum(nil)[:6])
}
