package server

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/internal/checkjson"
)

// Bounds of the settlements the decision API holds (POST /v1/settle): at
// most maxPending unsettled at once (those settled count for nothing), each
// for settleTTL. Past either, the oldest is dropped unsettled and its
// request stays counted in full: never more admitted than the limits
// allow, at worst less.
const (
	maxPending = 1 << 16
	settleTTL  = 15 * time.Minute
	// A settlement carries the header of an answer, as Client.Settle
	// sends it whole: bounded as a /v1/check body is, and by a count of
	// fields no real answer reaches.
	maxSettleBody  = maxCheckBody
	maxSettleField = 256
)

// pendings are the decisions the decision API admitted whose limits count
// by the answer, held by id until their caller settles them: at most max
// unsettled ones, each for settleTTL. A FIFO ring of ids, oldest at head,
// keeps their order; a settled id is gone from byID at once, and its slot,
// dead, holds no room among the max: when the ring is full of slots, the
// dead ones are compacted away before any unsettled id is dropped. The ring
// has twice max slots, so a compaction frees at least max of them: each put
// costs O(1) amortized, and memory is bounded by the ring and max entries.
type pendings struct {
	mu   sync.Mutex
	byID map[string]pendingEntry // the unsettled ids, every one in ring
	ring []string
	head int // of the oldest id in ring
	n    int // slots in use in ring, from head: ids held or settled
	max  int // unsettled ids held at most
	now  func() time.Time
	// dropped is called for each id dropped unsettled (expired, or the
	// oldest beyond the bound): sluice_settlements_total{result="dropped"}.
	dropped func()
}

type pendingEntry struct {
	p       *httplimit.Pending
	expires time.Time
}

func newPendings(now func() time.Time, dropped func()) *pendings {
	return &pendings{byID: map[string]pendingEntry{}, ring: make([]string, 2*maxPending), max: maxPending, now: now, dropped: dropped}
}

// settleCounters are sluice_settlements_total{result}: settled, unknown
// (an id not held: settled already, expired, dropped or never given),
// dropped (held ids dropped unsettled, their requests counted in full) and
// failed (the store failed the refund, the request counted in full).
type settleCounters struct {
	settled, unknown, dropped, failed prometheus.Counter
}

func newSettleCounters(reg prometheus.Registerer) settleCounters {
	vec := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sluice_settlements_total",
		Help: "Decisions of the decision API settled by their answer (POST /v1/settle), by result: settled; unknown (an id refused: not held, settled already, expired, forged, or of limits counted otherwise here); dropped (held, never settled: expired or the oldest beyond the bound, their requests counted in full); failed (the store failed the refund: the request counted in full, the id spent).",
	}, []string{"result"})
	reg.MustRegister(vec)
	return settleCounters{settled: vec.WithLabelValues("settled"), unknown: vec.WithLabelValues("unknown"),
		dropped: vec.WithLabelValues("dropped"), failed: vec.WithLabelValues("failed")}
}

// put holds p and returns its id, dropping the held ids that are expired
// and, when max are held, the oldest.
func (ps *pendings) put(p *httplimit.Pending) string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	id := base64.RawURLEncoding.EncodeToString(b[:])
	now := ps.now()
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for {
		ps.popSettledAndExpired(now)
		if ps.n == 0 || len(ps.byID) < ps.max {
			break
		}
		ps.pop(true) // the oldest held, beyond the bound
	}
	if ps.n == len(ps.ring) {
		ps.compact()
	}
	ps.ring[(ps.head+ps.n)%len(ps.ring)] = id
	ps.n++
	ps.byID[id] = pendingEntry{p: p, expires: now.Add(settleTTL)}
	return id
}

// popSettledAndExpired frees the slots at the ring's head of ids settled
// (gone from byID) or expired at now, dropping the expired ones, until the
// head is an id held and unexpired.
func (ps *pendings) popSettledAndExpired(now time.Time) {
	for ps.n > 0 {
		e, held := ps.byID[ps.ring[ps.head]]
		if held && now.Before(e.expires) {
			return
		}
		ps.pop(held)
	}
}

// pop frees the slot at the ring's head, dropping its id unsettled when it
// is held.
func (ps *pendings) pop(held bool) {
	if held {
		delete(ps.byID, ps.ring[ps.head])
		if ps.dropped != nil {
			ps.dropped()
		}
	}
	ps.ring[ps.head] = ""
	ps.head, ps.n = (ps.head+1)%len(ps.ring), ps.n-1
}

// compact moves the ids held together from the ring's head, oldest first,
// freeing the slots of those settled.
func (ps *pendings) compact() {
	kept := 0
	for i := range ps.n {
		j := (ps.head + i) % len(ps.ring)
		id := ps.ring[j]
		ps.ring[j] = ""
		if _, held := ps.byID[id]; held {
			ps.ring[(ps.head+kept)%len(ps.ring)] = id
			kept++
		}
	}
	ps.n = kept
}

// take removes and returns the Pending of id, nil when there is none (never
// held, settled already, dropped or expired).
func (ps *pendings) take(id string) *httplimit.Pending {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	e, ok := ps.byID[id]
	if !ok {
		return nil
	}
	delete(ps.byID, id)
	if !ps.now().Before(e.expires) {
		return nil
	}
	return e.p
}

// settleRequest is POST /v1/settle's body: the id /v1/check gave, the
// status of the answer to the request it admitted (0: none), and the
// answer's headers that limits counting a header read.
type settleRequest struct {
	ID      string            `json:"id"`
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
}

// readSettle reads r's body, a settleRequest, as readJSON does, but for
// a "headers" given twice (in any case): the last is read, as /v1/check
// reads its own, where encoding/json would merge the two, so that a header
// of an earlier one (an X-Usage-Tokens the last lacks) settles nothing.
func readSettle(w http.ResponseWriter, r *http.Request) (settleRequest, int, error) {
	var req settleRequest
	body, status, err := readJSONBody(w, r, maxSettleBody, &req)
	if err != nil {
		return req, status, err
	}
	if last, twice := checkjson.LastHeaders(body); twice {
		req.Headers = nil
		if err := json.Unmarshal(last, &req.Headers); err != nil {
			return req, http.StatusBadRequest, fmt.Errorf("headers: %w", err) // decoded once already: never
		}
	}
	return req, http.StatusOK, nil
}

// handleSettle is POST /v1/settle, for callers with the check scope: it
// settles a decision of /v1/check by its request's answer. 200 when
// settled; 404 for an id not (or no longer) held, whose charges stand; 400
// for a body that is not one (a header given twice, in another case, too),
// which spends no id; 503 when the store fails the refund. An id
// is spent by the settlement that takes it, whether its refund succeeds
// or not: a refund that failed may still have reached the store (a
// timeout), and trying it again could give the charge back twice, so the
// charges stand and a retry of the id is a 404.
func (s *Server) handleSettle(w http.ResponseWriter, r *http.Request, _ caller) {
	req, status, err := readSettle(w, r)
	switch {
	case err != nil:
		writeJSONProblem(w, status, http.StatusText(status), "settle: "+err.Error())
		return
	case req.ID == "":
		writeJSONProblem(w, http.StatusBadRequest, "Bad Request", `settle: "id" is required: the "settle" of a /v1/check answer`)
		return
	case req.Status != 0 && (req.Status < 100 || req.Status > 599):
		writeJSONProblem(w, http.StatusBadRequest, "Bad Request", fmt.Sprintf("settle: status %d is not an HTTP status (100 to 599, or 0 for no answer)", req.Status))
		return
	case len(req.Headers) > maxSettleField:
		writeJSONProblem(w, http.StatusBadRequest, "Bad Request", fmt.Sprintf("settle: more than %d headers", maxSettleField))
		return
	}
	// One header under two spellings would settle by whichever a map's
	// order sets last: refused, as /v1/check refuses it, before the id is
	// spent.
	if err := headerGivenTwice(req.Headers); err != nil {
		writeJSONProblem(w, http.StatusBadRequest, "Bad Request", "settle: "+err.Error())
		return
	}
	var p *httplimit.Pending
	if secret := s.Config().Settle.Secret; secret != nil && strings.Contains(req.ID, ".") {
		var err error
		switch p, err = s.takeSigned(r.Context(), s.state.Load(), secret, req.ID); {
		case errors.Is(err, errSettleLimits):
			s.settles.unknown.Inc()
			writeJSONProblem(w, http.StatusConflict, "Conflict", "settle: "+err.Error()+". Its request stays counted in full.")
			return
		case err != nil && !errors.Is(err, errSettleUnknown):
			s.warnings.Warn(r.Context(), s.log, "settle: not settled", "err", err)
			w.Header().Set("Retry-After", "1")
			writeJSONProblem(w, http.StatusServiceUnavailable, "Service Unavailable",
				"settle: the store cannot tell whether this id was settled; retry.")
			return
		}
	} else {
		p = s.pending.take(req.ID)
	}
	if p == nil {
		s.settles.unknown.Inc()
		writeJSONProblem(w, http.StatusNotFound, "Not Found",
			"No decision to settle under this id: settled already, expired or never given by this server. Its request stays counted in full.")
		return
	}
	h := make(http.Header, len(req.Headers))
	for k, v := range req.Headers {
		h.Set(k, v)
	}
	if err := p.Settle(r.Context(), req.Status, h); err != nil {
		s.settles.failed.Inc()
		if s.opts.Failover == nil { // a failover counts the refunds its store fails
			s.storeErrors.Add(1)
		}
		s.warnings.Warn(r.Context(), s.log, "settle: the refund failed, the request stays counted", "err", err)
		writeJSONProblem(w, http.StatusServiceUnavailable, "Service Unavailable",
			"settle: the store failed the refund, so its request stays counted. This id is spent: the refund may have reached the store, and a charge is never given back twice, so settling it again answers 404.")
		return
	}
	s.settles.settled.Inc()
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte("{\"settled\":true}\n"))
}
