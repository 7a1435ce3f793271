package server

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-dev/sluice/httplimit"
)

// Bounds of the settlements the decision API holds (POST /v1/settle): at
// most maxPending at once, each for settleTTL. Past either, the oldest is
// dropped unsettled and its request stays counted in full: never more
// admitted than the limits allow, at worst less.
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
// by the answer, held by id until their caller settles them. A FIFO ring
// of ids bounds them in number and age; a settled id is gone from byID and
// its slot in the ring is reclaimed in turn.
type pendings struct {
	mu   sync.Mutex
	byID map[string]pendingEntry
	ring []string
	head int // of the oldest id in ring
	n    int // ids in ring
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
	return &pendings{byID: map[string]pendingEntry{}, ring: make([]string, maxPending), now: now, dropped: dropped}
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

// put holds p and returns its id, dropping the oldest held ones that are
// expired or beyond maxPending.
func (ps *pendings) put(p *httplimit.Pending) string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	id := base64.RawURLEncoding.EncodeToString(b[:])
	now := ps.now()
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for ps.n > 0 {
		oldest := ps.ring[ps.head]
		e, ok := ps.byID[oldest]
		if ps.n < len(ps.ring) && ok && now.Before(e.expires) {
			break
		}
		if ok && ps.dropped != nil {
			ps.dropped()
		}
		delete(ps.byID, oldest)
		ps.ring[ps.head] = ""
		ps.head, ps.n = (ps.head+1)%len(ps.ring), ps.n-1
	}
	ps.ring[(ps.head+ps.n)%len(ps.ring)] = id
	ps.n++
	ps.byID[id] = pendingEntry{p: p, expires: now.Add(settleTTL)}
	return id
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
	var req settleRequest
	status, err := readJSON(w, r, maxSettleBody, &req)
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
