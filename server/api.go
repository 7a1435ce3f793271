package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/client"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/degrade"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/internal/checkjson"
)

// Bounds of the decision API's input.
const (
	maxCheckBody = 64 << 10
	// maxTokenLen bounds a check's token, as the middleware bounds a
	// bearer token.
	maxTokenLen = 8 << 10
	maxPathLen  = 2048
	maxHostLen  = 255
	// maxCheckHeaders bounds a check's headers, and maxHeaderValue each
	// value's bytes.
	maxCheckHeaders = 32
	maxHeaderValue  = 8 << 10
)

// The wire types of the decision API are the Go client's (client.CheckRequest,
// client.CheckResponse, client.LimitStatus): one schema for both sides.

// checkScratch is one decision API request's working memory: the body read,
// the request decoded, the response built and encoded. Pooled per Server.
type checkScratch struct {
	body    []byte
	req     client.CheckRequest
	cost    int64 // where req.Cost points when the body sets a cost
	out     client.CheckResponse
	hdr     http.Header
	headers map[string]string
	keys    []string
	// endpoint: the check named a method or a path (before validCheck's
	// defaults), so that degradation classes apply to it (state.shed).
	endpoint bool
}

func newCheckScratch() any {
	return &checkScratch{body: make([]byte, 0, 1024), hdr: http.Header{}, headers: map[string]string{}}
}

// maxPooledBody is the largest buffer a checkScratch keeps for the next
// request: bigger bodies (up to maxCheckBody) are rare and not worth holding.
const maxPooledBody = 8 << 10

func (s *Server) releaseCheck(sc *checkScratch) {
	if cap(sc.body) > maxPooledBody {
		sc.body = make([]byte, 0, 1024)
	}
	sc.req, sc.out, sc.endpoint = client.CheckRequest{}, client.CheckResponse{Limits: sc.out.Limits[:0]}, false
	clear(sc.hdr)
	clear(sc.headers)
	clear(sc.keys)
	s.checks.Put(sc)
}

// handleCheck is POST /v1/check, for callers with the check scope; sending
// "plan" also needs override_plan, which is refused before any decision.
// When the store cannot decide it answers 503 with Retry-After: 1. A
// described POST that carries a method override (a methodOverride header
// of its headers, or a _method of its path's query; a check describes no
// body) is judged as forward-auth judges it (overrideJudged): as the
// method named, or as the POST, or refused with a 400 that spends
// nothing. A check that the degradation level sheds (state.shed, as the
// proxy sheds its endpoint; one of neither method nor path at level 3
// alone) is answered a refusal that spends nothing (shedCheck).
func (s *Server) handleCheck(w http.ResponseWriter, r *http.Request, by caller) {
	sc := s.checks.Get().(*checkScratch)
	defer s.releaseCheck(sc)
	req := &sc.req
	if err := sc.decode(w, r); err != nil {
		status := http.StatusBadRequest
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			status = http.StatusRequestEntityTooLarge
			err = fmt.Errorf("the body is larger than %d bytes", maxCheckBody)
		}
		writeJSONProblem(w, status, http.StatusText(status), err.Error())
		return
	}
	if req.Plan != "" && !by.scopes.Has(config.ScopeOverridePlan) {
		s.refuseCaller(w, by, config.ScopeOverridePlan)
		return
	}
	c := httplimit.Requester{Subject: req.Subject, APIKey: req.APIKey, Token: req.Token, User: req.User, Plan: req.Plan,
		Host: req.Host}
	if len(req.Headers) > 0 {
		c.Header = make(http.Header, len(req.Headers))
		for k, v := range req.Headers {
			c.Header[http.CanonicalHeaderKey(k)] = []string{v}
		}
	}
	if req.IP != "" {
		c.IP, _ = netip.ParseAddr(req.IP) // validated by decode
	}
	cost := int64(-1)
	if req.Cost != nil {
		cost = *req.Cost
	}
	st := s.state.Load()
	_, query, _ := strings.Cut(req.Path, "?")
	method, named, err := overrideJudged(st.cfg, req.Method, query, c.Header)
	if err != nil {
		writeJSONProblem(w, http.StatusBadRequest, "Bad Request", err.Error())
		return
	}
	level := s.ctl.Level()
	if level > degrade.Normal && s.shedCheck(w, r, st, sc, level, method, named) {
		return
	}
	mw, res, err := st.decideAt(r.Context(), level, c, method, req.Path, cost)
	if err != nil {
		if errors.Is(err, httplimit.ErrUnknownPlan) || errors.Is(err, sluice.ErrInvalidCheck) || errors.Is(err, httplimit.ErrTokenRefused) {
			writeJSONProblem(w, http.StatusBadRequest, "Bad Request", err.Error())
			return
		}
		if r.Context().Err() != nil {
			return // the caller left: no one to answer, nothing failed
		}
		s.warnings.Warn(r.Context(), s.log, "decision API: no decision", "err", err)
		w.Header().Set("Retry-After", "1")
		writeJSONProblem(w, http.StatusServiceUnavailable, "Service Unavailable",
			"The limiter could not decide (its store is unreachable). Apply your own fallback and retry.")
		return
	}
	sc.fill(mw, res)
	if !res.Exempt && !res.Decision.Allowed {
		path, _, _ := strings.Cut(req.Path, "?")
		s.logRefusal("decision-api", method, path, requestID(r.Header), res, 0)
	}
	if p := mw.Keep(res); p != nil {
		sc.out.Settle = s.settleID(p)
	}
	// The response refers to res (its Violated): encode it before Discard.
	sc.body = checkjson.AppendResponse(sc.body[:0], &sc.out, &sc.keys)
	mw.Discard(res)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(sc.body)
}

// checkShed is the decision API's answer to a check that a degradation
// level shed: refused before any decision (no identity, plan or limits),
// with the problem type of the proxy's 503 and the level's sentence, and
// the wait as a refusal's (retryAfter, retryAfterMs, headers' Retry-After),
// which client.CheckResponse reads.
type checkShed struct {
	Allowed      bool              `json:"allowed"`
	Type         string            `json:"type"`
	Detail       string            `json:"detail"`
	Level        string            `json:"level"`
	RetryAfter   int64             `json:"retryAfter"`
	RetryAfterMs int64             `json:"retryAfterMs"`
	Headers      map[string]string `json:"headers"`
}

// shedCheck reports whether level sheds the check in sc (state.shed: as
// the proxy sheds its endpoint; one that names no endpoint, neither method
// nor path, at level 3 only), and if so answers it 200 with a checkShed, its
// wait shedRetryAfter, and counts and logs it (noteShed). judged is the
// method the check is judged by and named the one its override names
// (overrideJudged): a POST whose override names another method is shed by
// the classes of either method, as forward-auth sheds it. A
// shed is a refusal, as the limits' are, the caller's to pass on: a 503 is
// the answer of a limiter that could not decide, which a caller may fail
// open on.
func (s *Server) shedCheck(w http.ResponseWriter, r *http.Request, st *state, sc *checkScratch, level degrade.Level, judged, named string) bool {
	req := &sc.req
	var described *http.Request // none: a check of the client's limits alone
	method, path := "", ""
	if sc.endpoint {
		described = describedRequest(judged, req.Path, req.Host)
		method = judged
		path, _, _ = strings.Cut(req.Path, "?")
	}
	refuse, why := st.shed(level, described)
	if !refuse && described != nil && named != "" {
		described.Method = named
		if judged == named {
			described.Method = req.Method
		}
		refuse, why = st.shed(level, described) // a class of either reading
	}
	if !refuse {
		return false
	}
	wait, waitMs := shedRetryAfter(st.cfg)
	writeJSON(w, http.StatusOK, checkShed{Type: httplimit.ProblemReducedCapacity, Detail: shedDetail(why),
		Level: level.String(), RetryAfter: wait, RetryAfterMs: waitMs,
		Headers: map[string]string{"Retry-After": strconv.FormatInt(wait, 10)}})
	s.noteShed(shedViaDecisionAPI, level, method, path, requestID(r.Header), 0)
	return true
}

// fill builds the response to res in sc.out. It refers to res, which must
// outlive sc.out's use.
func (sc *checkScratch) fill(mw *httplimit.Middleware, res *httplimit.Result) {
	d := &res.Decision
	out := &sc.out
	*out = client.CheckResponse{Allowed: true, Identity: res.Identity.Kind, Cost: res.Cost, Exempt: res.Exempt, Limits: out.Limits[:0]}
	if res.Exempt {
		return
	}
	out.Allowed = d.Allowed
	out.Plan = res.Identity.Plan.Name
	// The limit whose figures the headers state: when refused, the one
	// whose wait retryAfter tells.
	l, st := res.Deciding()
	out.Limit = l.Name()
	out.Remaining = st.Remaining
	out.ResetAfterMs = ceilMs(st.ResetAfter)
	out.DelayMs = ceilMs(d.Delay)
	if !d.Allowed {
		out.Violated = d.Violated
		if wait := res.RetryAfter(); wait != sluice.Never {
			out.RetryAfterMs = ceilMs(wait)
			out.RetryAfter = max(1, (out.RetryAfterMs+999)/1000)
		}
	}
	if mw.RefusedForCapacity(res) {
		out.Type = httplimit.ProblemReducedCapacity
		if unreachable(d) {
			out.Detail = "The rate limiter cannot reach the store its limits are kept in and refuses every request until it answers again (on_store_error: deny). The client's quota is not spent: retry after Retry-After."
		}
	}
	nPlan := len(res.Checks) - len(mw.Policy().Global)
	// A limit whose status measures no use of the client's quota (no
	// store decided it: Unavailable, Undecided; or the store had no room:
	// NoRoom) keeps its place and shape here, its remaining and
	// resetAfterMs the status's stand-ins (docs/api.md); the headers leave
	// them out.
	for i, c := range res.Checks {
		st := d.Statuses[i]
		ls := client.LimitStatus{Name: c.Limit.Name(), Algorithm: c.Limit.Algorithm().String(), Quantity: c.Limit.Quantity(),
			Window: httplimit.WindowOf(c.Limit), Burst: mw.Stated(c.Limit).Burst(), Shadow: c.Limit.Shadow(),
			Global: i >= nPlan, Allowed: st.Allowed, Remaining: st.Remaining, ResetAfterMs: ceilMs(st.ResetAfter)}
		if !st.Allowed && st.RetryAfter != sluice.Never {
			ls.RetryAfterMs = ceilMs(st.RetryAfter)
		}
		out.Limits = append(out.Limits, ls)
	}
	clear(sc.hdr)
	mw.WriteHeaders(sc.hdr, res)
	if out.RetryAfter > 0 {
		// What a refusal through the proxy or forward-auth sends with them.
		sc.hdr.Set("Retry-After", strconv.FormatInt(out.RetryAfter, 10))
	}
	clear(sc.headers)
	for k, v := range sc.hdr {
		sc.headers[k] = strings.Join(v, ", ")
	}
	out.Headers = sc.headers
}

// unreachable reports whether a check of d was refused because its store
// could not be reached (sluice.Status.Unavailable).
func unreachable(d *sluice.Decision) bool {
	for _, st := range d.Statuses {
		if !st.Allowed && st.Unavailable {
			return true
		}
	}
	return false
}

// decode reads and validates the body of r into sc.req.
func (sc *checkScratch) decode(w http.ResponseWriter, r *http.Request) error {
	var err error
	sc.body, err = checkjson.ReadBody(sc.body[:0], http.MaxBytesReader(w, r.Body, maxCheckBody))
	if err != nil {
		return tooLong(sc.body, err)
	}
	req := &sc.req
	if !checkjson.Decode(sc.body, req, &sc.cost) {
		*req = client.CheckRequest{}
		if err := checkjson.DecodeStrict(sc.body, req); err != nil {
			return err
		}
	}
	sc.endpoint = req.Method != "" || req.Path != ""
	return validCheck(req)
}

// tooLong is the error of a body that could not be read whole: err, unless
// the part read (the first maxCheckBody bytes of a longer body) already shows
// it malformed — then the answer is the 400 that says why, as when the body
// is read as a stream and decoding stops at the first error. A whole object
// followed by whitespace up to the bound shows nothing malformed: err.
func tooLong(part []byte, err error) error {
	var tooBig *http.MaxBytesError
	if !errors.As(err, &tooBig) || len(bytes.TrimSpace(part)) == 0 {
		return err
	}
	var req client.CheckRequest
	switch jerr := checkjson.DecodeStrict(part, &req); {
	case jerr == nil, errors.Is(jerr, io.ErrUnexpectedEOF):
		// An object and whitespace up to the bound: what follows is
		// unread, the body over the bound.
		return err
	default:
		return jerr
	}
}

// validCheck checks the decoded req against the API's bounds and fills its
// defaults (method GET, path /).
func validCheck(req *client.CheckRequest) error {
	set := 0
	for _, f := range [...]struct {
		name, v string
		max     int
	}{{"subject", req.Subject, sluice.MaxKeyLen}, {"api_key", req.APIKey, sluice.MaxKeyLen}, {"token", req.Token, maxTokenLen},
		{"user", req.User, sluice.MaxKeyLen}, {"ip", req.IP, sluice.MaxKeyLen}} {
		if f.v == "" {
			continue
		}
		set++
		if len(f.v) > f.max {
			return fmt.Errorf("%s: %d bytes, more than %d", f.name, len(f.v), f.max)
		}
	}
	if (req.Token != "" || req.APIKey != "") && req.IP != "" {
		set-- // the address of a client whose token is not verified, or whose key is not listed
	}
	if set != 1 {
		return errors.New("identify the client with exactly one of subject, api_key, token, user or ip (ip may come with token or api_key)")
	}
	if req.IP != "" {
		switch addr, err := netip.ParseAddr(req.IP); {
		case err != nil:
			return fmt.Errorf("ip: %q is not an IP address", req.IP)
		case addr.Zone() != "":
			// A zone names an interface of the caller's host, never
			// part of a client's identity.
			return fmt.Errorf("ip: %q has a zone (%%%s): send the address alone", req.IP, addr.Zone())
		}
	}
	if req.Cost != nil && (*req.Cost < 0 || *req.Cost > sluice.MaxQuantity) {
		return fmt.Errorf("cost: %d is not in [0, %d]", *req.Cost, int64(sluice.MaxQuantity))
	}
	if req.Method == "" {
		req.Method = http.MethodGet
	}
	if err := validMethod(req.Method); err != nil {
		return fmt.Errorf("method: %w", err)
	}
	if req.Path == "" {
		req.Path = "/"
	}
	if len(req.Path) > maxPathLen || !absolutePath(req.Path) {
		return fmt.Errorf("path: want an absolute path of at most %d bytes", maxPathLen)
	}
	// Checked and read as forward-auth checks and reads its URI: without
	// the fragment, its dot segments resolved, encoded ones too, in both
	// readings of the path.
	target, _, err := describedTarget(req.Path)
	if err != nil {
		return fmt.Errorf("path: %w", err)
	}
	path, query, hasQuery := strings.Cut(target, "?")
	resolved, ok := judgedPath(path)
	switch {
	case !ok:
		return fmt.Errorf("path: %w", errThreeReadings)
	case resolved == path:
		req.Path = target
	case hasQuery:
		req.Path = resolved + "?" + query
	default:
		req.Path = resolved
	}
	if err := validHost(req.Host); err != nil {
		return fmt.Errorf("host: %w", err)
	}
	if len(req.Headers) > maxCheckHeaders {
		return fmt.Errorf("headers: %d, more than %d", len(req.Headers), maxCheckHeaders)
	}
	if err := headerGivenTwice(req.Headers); err != nil {
		return err
	}
	for k, v := range req.Headers {
		if !httpguts.ValidHeaderFieldName(k) {
			return fmt.Errorf("headers: %q is not a header name", k)
		}
		if len(v) > maxHeaderValue || !httpguts.ValidHeaderFieldValue(v) {
			return fmt.Errorf("headers: %s: want a header value of at most %d bytes, without control characters", k, maxHeaderValue)
		}
	}
	return nil
}

// headerGivenTwice returns an error naming a header that h, a body's
// "headers" (of /v1/check or /v1/settle), gives twice under names that
// differ only in case: they are one header, and which of its two values is
// read would be the order of a map's.
func headerGivenTwice(h map[string]string) error {
	if len(h) < 2 {
		return nil
	}
	names := make([]string, 0, len(h)) // canonical
	for k := range h {
		c := http.CanonicalHeaderKey(k)
		if slices.Contains(names, c) {
			return fmt.Errorf("headers: %s is given twice (names are case-insensitive)", c)
		}
		names = append(names, c)
	}
	return nil
}

func ceilMs(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.Encode(v)
}
