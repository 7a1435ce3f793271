package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/client"
	"github.com/sluice-dev/sluice/httplimit"
)

// Bounds of the decision API's input.
const (
	maxCheckBody = 64 << 10
	maxPathLen   = 2048
)

// The wire types of the decision API are the Go client's (client.CheckRequest,
// client.CheckResponse, client.LimitStatus): one schema for both sides.

func (s *Server) handleCheck(w http.ResponseWriter, r *http.Request) {
	req, err := decodeCheck(w, r)
	if err != nil {
		status := http.StatusBadRequest
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			status = http.StatusRequestEntityTooLarge
			err = fmt.Errorf("the body is larger than %d bytes", maxCheckBody)
		}
		writeJSONProblem(w, status, http.StatusText(status), err.Error())
		return
	}
	c := httplimit.Client{Subject: req.Subject, APIKey: req.APIKey, User: req.User, Plan: req.Plan}
	if req.IP != "" {
		c.IP, _ = netip.ParseAddr(req.IP) // validated by decodeCheck
	}
	cost := int64(-1)
	if req.Cost != nil {
		cost = *req.Cost
	}
	st := s.state.Load()
	res, err := st.mw.DecideClient(r.Context(), c, req.Method, req.Path, cost)
	if err != nil {
		if errors.Is(err, httplimit.ErrUnknownPlan) || errors.Is(err, sluice.ErrInvalidCheck) {
			writeJSONProblem(w, http.StatusBadRequest, "Bad Request", err.Error())
			return
		}
		s.log.Warn("decision API: no decision", "err", err)
		writeJSONProblem(w, http.StatusServiceUnavailable, "Service Unavailable",
			"The limiter could not decide (its store is unreachable). Apply your own fallback and retry.")
		return
	}
	defer st.mw.Release(res)
	writeJSON(w, http.StatusOK, s.checkResponse(st.mw, res))
}

func (s *Server) checkResponse(mw *httplimit.Middleware, res *httplimit.Result) client.CheckResponse {
	d := &res.Decision
	out := client.CheckResponse{Allowed: true, Identity: res.Identity.Kind, Cost: res.Cost, Exempt: res.Exempt}
	if res.Exempt {
		return out
	}
	out.Allowed = d.Allowed
	out.Plan = res.Identity.Plan.Name
	out.Limit = d.Limit.Name()
	out.Remaining = d.Remaining
	out.ResetAfterMs = ceilMs(d.ResetAfter)
	out.DelayMs = ceilMs(d.Delay)
	if !d.Allowed {
		out.Violated = append([]string(nil), d.Violated...)
		if d.RetryAfter != sluice.Never {
			out.RetryAfterMs = ceilMs(d.RetryAfter)
			out.RetryAfter = max(1, (out.RetryAfterMs+999)/1000)
		}
	}
	nPlan := len(res.Checks) - len(mw.Policy().Global)
	for i, c := range res.Checks {
		st := d.Statuses[i]
		ls := client.LimitStatus{Name: c.Limit.Name(), Algorithm: c.Limit.Algorithm().String(), Quantity: c.Limit.Quantity(),
			Window: httplimit.FormatWindow(c.Limit.Window()), Burst: c.Limit.Burst(), Shadow: c.Limit.Shadow(),
			Global: i >= nPlan, Allowed: st.Allowed, Remaining: st.Remaining, ResetAfterMs: ceilMs(st.ResetAfter)}
		if !st.Allowed && st.RetryAfter != sluice.Never {
			ls.RetryAfterMs = ceilMs(st.RetryAfter)
		}
		out.Limits = append(out.Limits, ls)
	}
	h := http.Header{}
	mw.WriteHeaders(h, res)
	out.Headers = map[string]string{}
	for k, v := range h {
		out.Headers[k] = strings.Join(v, ", ")
	}
	return out
}

func decodeCheck(w http.ResponseWriter, r *http.Request) (*client.CheckRequest, error) {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxCheckBody))
	dec.DisallowUnknownFields()
	var req client.CheckRequest
	if err := dec.Decode(&req); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, err
		}
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty body: send a JSON object, e.g. {\"api_key\": \"...\", \"method\": \"GET\", \"path\": \"/api/search\"}")
		}
		return nil, fmt.Errorf("malformed JSON: %v", err)
	}
	if dec.More() {
		return nil, errors.New("malformed JSON: more than one value in the body")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("malformed JSON: data after the object")
	}
	set := 0
	for _, f := range []struct {
		name, v string
	}{{"subject", req.Subject}, {"api_key", req.APIKey}, {"user", req.User}, {"ip", req.IP}} {
		if f.v == "" {
			continue
		}
		set++
		if len(f.v) > sluice.MaxKeyLen {
			return nil, fmt.Errorf("%s: %d bytes, more than %d", f.name, len(f.v), sluice.MaxKeyLen)
		}
	}
	if set != 1 {
		return nil, errors.New("identify the client with exactly one of subject, api_key, user or ip")
	}
	if req.IP != "" {
		if _, err := netip.ParseAddr(req.IP); err != nil {
			return nil, fmt.Errorf("ip: %q is not an IP address", req.IP)
		}
	}
	if req.Cost != nil && (*req.Cost < 0 || *req.Cost > sluice.MaxQuantity) {
		return nil, fmt.Errorf("cost: %d is not in [0, %d]", *req.Cost, int64(sluice.MaxQuantity))
	}
	if req.Method == "" {
		req.Method = http.MethodGet
	}
	if len(req.Method) > 32 || strings.ToUpper(req.Method) != req.Method || strings.ContainsAny(req.Method, " /\t") {
		return nil, fmt.Errorf("method: %q is not an HTTP method", req.Method)
	}
	if req.Path == "" {
		req.Path = "/"
	}
	if len(req.Path) > maxPathLen || req.Path[0] != '/' {
		return nil, fmt.Errorf("path: want an absolute path of at most %d bytes", maxPathLen)
	}
	return &req, nil
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
