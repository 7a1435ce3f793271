package server

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// The key admin API, on the admin listener behind the admin scope:
//
//	GET    /v1/keys?top=N               the most refused subjects (at most N, 10 by default)
//	GET    /v1/keys/{subject}?plan=P    every limit's state for subject (peeks: nothing is spent),
//	                                    under the reduced limits while degraded
//	DELETE /v1/keys/{subject}?limit=L   forget subject's state of limit L (of penalty: and of
//	                                    penalty-refusals), or, without limit, of every limit
//	                                    (plan=P: under plan P's limits)
//	POST   /v1/keys/{subject}?action=penalize   put subject's client in the penalty box now
//
// Each takes the query parameters listed, each once and with a value; any
// other parameter, one given twice or empty, or a query that does not parse
// is a 400 naming it (see keyQuery).
//
// Subjects are those httplimit.Middleware.Subject takes: Identity subjects
// ("key:<sha256 hex>", "user:…", "user#…", "ip:…", "ext:…"), a listed API
// key by its name ("name:acme"), rules' keys ("rule:<rule>/…") and "*" for
// the global limits. Any other text is a 400 whose problem lists them.

// keyState is one subject's state as GET /v1/keys/{subject} answers it.
type keyState struct {
	Subject string `json:"subject"`
	// Exempt is why every request of the subject's client is exempt (key,
	// user, plan, address: see exemptionOf), of those decided on plan P
	// with ?plan=P, empty when its requests are decided. An exempt
	// client's states are never spent nor checked.
	Exempt string       `json:"exempt,omitempty"`
	Limits []limitState `json:"limits"`
}

type limitState struct {
	httplimit.LimitState
	ResetAfterMs int64 `json:"resetAfterMs"`
}

// topSubject is one entry of GET /v1/keys: refused is what the subject
// certainly got, refusedAtMost what it may have got (see topRow).
type topSubject struct {
	Subject string `json:"subject"`
	topRow
}

func (s *Server) handleKeysTop(w http.ResponseWriter, r *http.Request, _ caller) {
	q, ok := keyQuery(w, r, "top")
	if !ok {
		return
	}
	n := 10
	if v := q["top"]; v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 || n > topCapacity {
			writeJSONProblem(w, http.StatusBadRequest, "Bad Request", "top is a count in [1, "+strconv.Itoa(topCapacity)+"]")
			return
		}
	}
	s.stats.mu.Lock()
	out := make([]topSubject, 0, s.stats.top.len())
	for sub, e := range s.stats.top.bySubject {
		out = append(out, topSubject{Subject: sub, topRow: e.row()})
	}
	s.stats.mu.Unlock()
	slices.SortFunc(out, func(a, b topSubject) int {
		return cmp.Or(a.compare(b.topRow), strings.Compare(a.Subject, b.Subject))
	})
	writeJSON(w, http.StatusOK, out[:min(n, len(out))])
}

// handleKeyInspect reads a subject's state under the limits its requests
// are decided by now: the reduced ones while degraded.
func (s *Server) handleKeyInspect(w http.ResponseWriter, r *http.Request, _ caller) {
	q, ok := keyQuery(w, r, "plan")
	if !ok {
		return
	}
	st := s.state.Load()
	mw := st.deciderAt(s.ctl.Level())
	subject, err := mw.Subject(r.PathValue("subject"))
	if err != nil {
		s.keysError(w, err)
		return
	}
	states, err := mw.Inspect(r.Context(), subject, q["plan"])
	if err != nil {
		s.keysError(w, err)
		return
	}
	exempt, _ := exemptionOf(st.cfg, mw, subject, q["plan"])
	out := keyState{Subject: subject, Exempt: exempt, Limits: make([]limitState, len(states))}
	for i, st := range states {
		out.Limits[i] = limitState{LimitState: st, ResetAfterMs: ceilMs(st.ResetAfter)}
	}
	writeJSON(w, http.StatusOK, out)
}

// handleKeyReset forgets a subject's state: of the limit named by limit=,
// or, without it, of every limit. A query it does not take is refused
// before anything is forgotten: a typo (?limt=per-minute) must not forget
// every limit.
func (s *Server) handleKeyReset(w http.ResponseWriter, r *http.Request, c caller) {
	q, ok := keyQuery(w, r, "plan", "limit")
	if !ok {
		return
	}
	mw := s.state.Load().mw
	subject, err := mw.Subject(r.PathValue("subject"))
	if err != nil {
		s.keysError(w, err)
		return
	}
	key, limits, err := mw.SubjectLimits(subject, q["plan"])
	if err != nil {
		s.keysError(w, err)
		return
	}
	if name, ok := q["limit"]; ok {
		i := slices.IndexFunc(limits, func(l sluice.Limit) bool { return l.Name() == name })
		if i < 0 {
			writeJSONProblem(w, http.StatusNotFound, "Not Found", "subject "+subject+" has no limit "+name)
			return
		}
		picked := limits[i : i+1]
		if name == "penalty" {
			// A client released from the penalty box starts its refusals
			// afresh: those that boxed it would box it again at its next.
			if j := slices.IndexFunc(limits, func(l sluice.Limit) bool { return l.Name() == "penalty-refusals" }); j >= 0 {
				picked = []sluice.Limit{limits[i], limits[j]}
			}
		}
		limits = picked
	}
	var forgot int
	switch st := s.opts.Store.(type) {
	case *memory.Store:
		forgot = st.Reset(key, limits)
	case stateResetter:
		if forgot, err = st.Reset(r.Context(), key, limits); err != nil {
			s.keysError(w, err)
			return
		}
	default:
		writeJSONProblem(w, http.StatusNotImplemented, "Not Implemented",
			"This server's store cannot forget a subject's state.")
		return
	}
	// What the middlewares remember of the client's box is forgotten, so
	// that a released client is let out at once whatever the level.
	st := s.state.Load()
	st.mw.ForgetBox(key)
	if st.degrade != nil {
		st.degrade.reduced.ForgetBox(key)
	}
	names := make([]string, len(limits))
	for i, l := range limits {
		names[i] = l.Name()
	}
	s.log.Info("keys reset", "caller", c.who(), "peer", peerIP(r).String(), "subject", subject, "limits", names, "forgot", forgot)
	writeJSON(w, http.StatusOK, map[string]any{"subject": subject, "limits": names, "forgot": forgot})
}

// handleKeyPenalize puts a client in the penalty box at an operator's
// request: 409 without a penalty box, 400 for a subject that is not a
// client's, 409 for a client an exemption covers (whose requests are never
// decided, so no box would hold them), nothing written. It is logged with
// the caller.
func (s *Server) handleKeyPenalize(w http.ResponseWriter, r *http.Request, c caller) {
	q, ok := keyQuery(w, r, "action")
	if !ok {
		return
	}
	if a := q["action"]; a != "penalize" {
		writeJSONProblem(w, http.StatusBadRequest, "Bad Request", "action "+strconv.Quote(a)+" is not one this API takes (penalize)")
		return
	}
	st := s.state.Load()
	mw := st.mw
	subject, err := mw.Subject(r.PathValue("subject"))
	if err != nil {
		s.keysError(w, err)
		return
	}
	if reason, entry := exemptionOf(st.cfg, mw, subject, ""); reason != "" {
		writeExemptProblem(w, reason, subject+" is exempt ("+entry+"): its requests are never limited, so the penalty box would hold none of them. "+
			"Take it out of the exemption (and reload) to box it.")
		return
	}
	d, err := mw.Penalize(r.Context(), subject)
	if errors.Is(err, httplimit.ErrNoPenalty) {
		writeJSONProblem(w, http.StatusConflict, "Conflict", err.Error())
		return
	}
	if err != nil {
		s.keysError(w, err)
		return
	}
	s.log.Info("keys penalize", "caller", c.who(), "peer", peerIP(r).String(), "subject", subject, "for", d)
	writeJSON(w, http.StatusOK, map[string]any{"subject": subject, "penalizedForMs": ceilMs(d)})
}

// exemptProblem is the RFC 9457 problem of a request refused because the
// subject's client is exempt: Exempt is why, as keyState's.
type exemptProblem struct {
	problem
	Exempt string `json:"exempt"`
}

// writeExemptProblem answers 409 with an exemptProblem.
func writeExemptProblem(w http.ResponseWriter, reason, detail string) {
	body, _ := json.Marshal(exemptProblem{problem{Type: "about:blank", Title: "Conflict", Status: http.StatusConflict, Detail: detail}, reason})
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)+1))
	w.WriteHeader(http.StatusConflict)
	w.Write(append(body, '\n'))
}

// keyQuery returns the query parameters of r, a request of the key admin
// API that takes those named known, by name, and true; or answers 400 with
// a problem naming the parameter, and returns false, for a query that does
// not parse, a parameter not known, one given more than once or one
// without a value. An operator's typo is refused, never read as a
// parameter not given: on DELETE that would forget every limit.
func keyQuery(w http.ResponseWriter, r *http.Request, known ...string) (map[string]string, bool) {
	vs, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		writeJSONProblem(w, http.StatusBadRequest, "Bad Request", "the query does not parse: "+err.Error())
		return nil, false
	}
	names := slices.Sorted(maps.Keys(vs))
	q := make(map[string]string, len(vs))
	for _, name := range names {
		var detail string
		switch v := vs[name]; {
		case !slices.Contains(known, name):
			detail = "parameter " + strconv.Quote(name) + " is not one this request takes (" + strings.Join(known, ", ") + ")"
		case len(v) > 1:
			detail = "parameter " + strconv.Quote(name) + " is given " + strconv.Itoa(len(v)) + " times: give it once"
		case v[0] == "":
			detail = "parameter " + strconv.Quote(name) + " has no value: give one, or leave the parameter out"
		default:
			q[name] = v[0]
			continue
		}
		writeJSONProblem(w, http.StatusBadRequest, "Bad Request", detail)
		return nil, false
	}
	return q, true
}

// stateResetter is a Store that can forget a key's state under limits, as
// memory.Store.Reset does (redis.Guarded, the store a server on Redis runs,
// is one).
type stateResetter interface {
	Reset(ctx context.Context, key string, limits []sluice.Limit) (int, error)
}

// keysError answers err of the key admin API: 503 with Retry-After: 1
// when the store cannot be reached, else 400.
func (s *Server) keysError(w http.ResponseWriter, err error) {
	status := http.StatusBadRequest
	if errors.Is(err, sluice.ErrStoreUnavailable) {
		status = http.StatusServiceUnavailable
		w.Header().Set("Retry-After", "1")
	}
	writeJSONProblem(w, status, http.StatusText(status), err.Error())
}

// keyRoutes mounts the key admin API on mux, behind the admin scope.
func (s *Server) keyRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/keys", s.guard(config.ScopeAdmin, false, s.handleKeysTop))
	mux.HandleFunc("GET /v1/keys/{subject...}", s.guard(config.ScopeAdmin, false, s.handleKeyInspect))
	mux.HandleFunc("DELETE /v1/keys/{subject...}", s.guard(config.ScopeAdmin, false, s.handleKeyReset))
	mux.HandleFunc("POST /v1/keys/{subject...}", s.guard(config.ScopeAdmin, false, s.handleKeyPenalize))
	mux.HandleFunc("/v1/keys", allowOnly("GET, HEAD"))
	mux.HandleFunc("/v1/keys/{subject...}", allowOnly("GET, HEAD, DELETE, POST"))
	mux.HandleFunc("POST /v1/tokens", s.guard(config.ScopeAdmin, false, s.handleToken))
	mux.HandleFunc("/v1/tokens", onlyPost)
}
