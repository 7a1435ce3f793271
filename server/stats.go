package server

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"sync"
	"time"

	"github.com/sluice-dev/sluice/httplimit"
)

// stats keeps what the dashboard shows: decisions per second over the last
// minute, refusals by limit, and the most limited clients (named or
// pseudonymous, bounded; see displayClient).
type stats struct {
	clock func() time.Time
	// clientKey keys the clients' pseudonyms: random, drawn when the stats
	// are made, never shown or stored, so a pseudonym cannot be recomputed
	// from a guessed subject outside this process.
	clientKey [32]byte

	mu      sync.Mutex
	seconds [60]second
	byLimit map[string]int64
	top     map[string]*topEntry // at most topCapacity entries
	total   struct{ decisions, refused, errors int64 }
}

type second struct {
	at                         int64 // Unix second this slot holds
	decisions, refused, errors int64
}

type topEntry struct {
	Client string `json:"client"` // see displayClient
	Plan   string `json:"plan"`
	Count  int64  `json:"refused"`
}

// topCapacity bounds the clients tracked for the top list; a new client
// replaces the least refused one (space-saving), so a key flood costs
// nothing but accuracy at the bottom of the list.
const topCapacity = 512

func newStats(clock func() time.Time) *stats {
	s := &stats{clock: clock, byLimit: map[string]int64{}, top: map[string]*topEntry{}}
	rand.Read(s.clientKey[:]) // never fails (crypto/rand)
	return s
}

func (s *stats) slot() *second {
	now := s.clock().Unix()
	sl := &s.seconds[now%60]
	if sl.at != now {
		*sl = second{at: now}
	}
	return sl
}

func (s *stats) recordError() {
	s.mu.Lock()
	s.slot().errors++
	s.total.errors++
	s.mu.Unlock()
}

func (s *stats) record(res *httplimit.Result) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sl := s.slot()
	sl.decisions++
	s.total.decisions++
	if res.Decision.Allowed {
		return
	}
	sl.refused++
	s.total.refused++
	for _, name := range res.Decision.Violated {
		if len(s.byLimit) < 1024 || s.byLimit[name] > 0 {
			s.byLimit[name]++
		}
	}
	e := s.top[res.Identity.Subject]
	if e == nil {
		if len(s.top) >= topCapacity {
			var minKey string
			var minE *topEntry
			for k, v := range s.top {
				if minE == nil || v.Count < minE.Count {
					minKey, minE = k, v
				}
			}
			delete(s.top, minKey)
			e = &topEntry{Count: minE.Count}
		} else {
			e = &topEntry{}
		}
		e.Client = s.displayClient(res.Identity)
		e.Plan = res.Identity.Plan.Name
		s.top[res.Identity.Subject] = e
	}
	e.Count++
}

// displayClient shows a client without revealing it: a configured API key
// that has a name by its kind and name ("api-key:free-tier"), any other
// client by its kind and a pseudonym, the first 6 bytes of
// HMAC-SHA256(clientKey, subject) in hex ("ip:3f09a1c2e4b7"). The same subject has the same pseudonym for
// the life of the stats, and another under other stats (another process);
// without the key, a pseudonym says nothing of its subject, even to whoever
// can try every candidate subject (every address of a /24).
func (s *stats) displayClient(id httplimit.Identity) string {
	if id.KeyName != "" {
		return id.Kind + ":" + id.KeyName
	}
	m := hmac.New(sha256.New, s.clientKey[:])
	m.Write([]byte(id.Subject))
	return id.Kind + ":" + hex.EncodeToString(m.Sum(nil)[:6])
}

// dashboardData is the JSON the dashboard polls.
type dashboardData struct {
	Now                string       `json:"now"`
	DecisionsPerSecond int64        `json:"decisionsPerSecond"`
	RefusedPerSecond   int64        `json:"refusedPerSecond"`
	Series             []seriesItem `json:"series"`
	RefusedByLimit     []limitCount `json:"refusedByLimit"`
	TopLimited         []topEntry   `json:"topLimited"`
	Totals             struct {
		Decisions int64 `json:"decisions"`
		Refused   int64 `json:"refused"`
		Errors    int64 `json:"errors"`
	} `json:"totals"`
	DegradationLevel int `json:"degradationLevel"`
}

type seriesItem struct {
	At        int64 `json:"t"`
	Decisions int64 `json:"decisions"`
	Refused   int64 `json:"refused"`
}

type limitCount struct {
	Limit string `json:"limit"`
	Count int64  `json:"refused"`
}

func (s *stats) snapshot() dashboardData {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock()
	var d dashboardData
	d.Now = now.UTC().Format(time.RFC3339)
	sec := now.Unix()
	for t := sec - 59; t <= sec; t++ {
		sl := s.seconds[((t%60)+60)%60]
		item := seriesItem{At: t}
		if sl.at == t {
			item.Decisions, item.Refused = sl.decisions, sl.refused
		}
		d.Series = append(d.Series, item)
	}
	if prev := d.Series[len(d.Series)-2]; true { // the last complete second
		d.DecisionsPerSecond, d.RefusedPerSecond = prev.Decisions, prev.Refused
	}
	for name, n := range s.byLimit {
		d.RefusedByLimit = append(d.RefusedByLimit, limitCount{name, n})
	}
	sort.Slice(d.RefusedByLimit, func(i, j int) bool { return d.RefusedByLimit[i].Count > d.RefusedByLimit[j].Count })
	for _, e := range s.top {
		d.TopLimited = append(d.TopLimited, *e)
	}
	sort.Slice(d.TopLimited, func(i, j int) bool { return d.TopLimited[i].Count > d.TopLimited[j].Count })
	if len(d.TopLimited) > 10 {
		d.TopLimited = d.TopLimited[:10]
	}
	d.Totals.Decisions, d.Totals.Refused, d.Totals.Errors = s.total.decisions, s.total.refused, s.total.errors
	return d
}
