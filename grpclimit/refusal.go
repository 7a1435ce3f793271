package grpclimit

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sluice-dev/sluice/httplimit"
)

// refusal is the status and the trailers of the refused call r: the
// middleware's refusal, translated. Its status gives the code, as gRPC's
// HTTP mapping does (429 RESOURCE_EXHAUSTED; 503 UNAVAILABLE, a refusal by
// the global limits alone with Limits.GlobalStatus 503: the service, not
// the client, is at its limit). Its problem body gives the message and
// the Help links, its headers the trailers; the decision gives RetryInfo's
// exact delay (never later than the problem's Retry-After, which is whole
// seconds) and a QuotaFailure violation per limit exceeded. Its trailers
// add the decision's date (see fields) and grpc-retry-pushback-ms
// (PushbackOf the status, for r's context, spread by Limits.RetryJitter:
// see pushback), which grpc-go's own retries heed where they ignore
// RetryInfo.
func (s *Server) refusal(r *http.Request, res *httplimit.Result) (*status.Status, metadata.MD) {
	w := &recorder{header: http.Header{}}
	s.m.Refuse(w, r, res)
	var p httplimit.Problem
	if err := json.Unmarshal(w.body, &p); err != nil || p.Detail == "" {
		p.Detail = "Rate limit exceeded." // a Problem always marshals and has a detail
	}
	code := codes.ResourceExhausted
	if w.status == http.StatusServiceUnavailable {
		code = codes.Unavailable
	}
	st := status.New(code, p.Detail)
	var details []protoadapt.MessageV1
	if p.RetryAfter != nil {
		delay := min(res.RetryAfter(), time.Duration(*p.RetryAfter)*time.Second)
		details = append(details, &errdetails.RetryInfo{RetryDelay: durationpb.New(delay)})
	}
	details = append(details, quotaFailure(res))
	if h := HelpOf(&p); h != nil {
		details = append(details, h)
	}
	if withDetails, err := st.WithDetails(details...); err == nil {
		st = withDetails
	}
	md := fields(w.header, res.Now)
	md.Set(pushbackKey, s.pushback(r.Context(), st, res))
	return st, md
}

// quotaFailure names every limit that refused the call: its subject is
// whose quota it is, read from the check's store key (the scope, "/" and
// a subject; see httplimit.Options.Scope): the client as the limiter keyed
// it (API keys only as their hash), "global" for a global limit, and
// "rule:<name>" for a rule's limit keyed by something other than the
// client alone (a quota every caller with that key shares; its values are
// left out, as they may be a credential). Its quota id is the limit's name
// as RateLimit-Policy says it, its metric "requests" (what every limit
// counts, a call spending its cost of them), its dimensions what the
// quota is enforced per ("plan" for a plan's limit, "rule" for a rule's,
// none for a global limit), its description what the limit allows and
// what the call costs of it (httplimit.Result.Describe). A refusal by the
// penalty box (res.Penalized) has the box's violation instead (see
// penaltyViolation): the box is no limit of the plan.
func quotaFailure(res *httplimit.Result) *errdetails.QuotaFailure {
	qf := &errdetails.QuotaFailure{}
	if res.Penalized {
		qf.Violations = append(qf.Violations, penaltyViolation(res))
		return qf
	}
	rules := res.Rules()
	for i, c := range res.Checks {
		if !res.Decision.Statuses[i].Allowed && !c.Limit.Shadow() {
			qf.Violations = append(qf.Violations, violation(res, i, rules))
		}
	}
	return qf
}

// violation is the QuotaFailure violation of res's check i (see
// quotaFailure); rules are res.Rules().
func violation(res *httplimit.Result, i int, rules []string) *errdetails.QuotaFailure_Violation {
	c := res.Checks[i]
	l, plan := c.Limit, res.Identity.Plan.Name
	subject, dims := res.Identity.Subject, map[string]string{"plan": plan}
	_, key, _ := strings.Cut(c.Key, "/")
	switch rule, isRule := strings.CutPrefix(key, "rule:"); {
	case key == httplimit.GlobalSubject:
		subject, dims = "global", nil
	case isRule:
		rule, _, _ = strings.Cut(rule, "/")
		subject, dims = "rule:"+rule, map[string]string{"rule": rule}
	default: // the client's: a plan's limit, or a rule's keyed by the client
		for _, r := range rules {
			if strings.HasPrefix(l.Name(), r+".") {
				dims = map[string]string{"rule": r}
			}
		}
	}
	return &errdetails.QuotaFailure_Violation{
		Subject:         subject,
		Description:     res.Describe(i),
		QuotaId:         l.Name(),
		QuotaMetric:     "requests",
		QuotaDimensions: dims,
		QuotaValue:      l.Quantity(),
	}
}

// penaltyViolation is the QuotaFailure violation of a refusal by the
// penalty box: its subject the client, its quota id "penalty" (the box's
// name, as RateLimit-Policy and the problem body say it), its metric
// "requests", no dimensions and no quota value (the box holds the client
// whatever its plan allows), and a description saying for how long the
// box refuses, as the problem body does.
func penaltyViolation(res *httplimit.Result) *errdetails.QuotaFailure_Violation {
	box := res.Checks[0].Limit
	return &errdetails.QuotaFailure_Violation{
		Subject:     res.Identity.Subject,
		Description: "In the penalty box: every request is refused for " + httplimit.WindowOf(box) + ".",
		QuotaId:     box.Name(),
		QuotaMetric: "requests",
	}
}

// HelpOf returns the Help detail of a refusal whose problem body is p: a
// link to the plan that allows more (p.Upgrade) and one to the
// documentation (p.Documentation), each when p has it; nil when it has
// neither.
func HelpOf(p *httplimit.Problem) *errdetails.Help {
	h := &errdetails.Help{}
	if p.Upgrade != nil && p.Upgrade.URL != "" {
		h.Links = append(h.Links, &errdetails.Help_Link{Description: "The " + p.Upgrade.Plan + " plan allows more", Url: p.Upgrade.URL})
	}
	if p.Documentation != "" {
		h.Links = append(h.Links, &errdetails.Help_Link{Description: "Rate limits", Url: p.Documentation})
	}
	if len(h.Links) == 0 {
		return nil
	}
	return h
}

// recorder is the http.ResponseWriter that catches the middleware's
// refusal.
type recorder struct {
	status int
	header http.Header
	body   []byte
}

func (w *recorder) Header() http.Header         { return w.header }
func (w *recorder) WriteHeader(status int)      { w.status = status }
func (w *recorder) Write(b []byte) (int, error) { w.body = append(w.body, b...); return len(b), nil }
