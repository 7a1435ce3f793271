package httplimit

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/grpcweb"
)

// Values of Options.Count: which admitted requests a limit counts, by the
// status of the answer to them. A success is a status below 400 (1xx, 2xx,
// 3xx), a failure 400 or above, as express-rate-limit's
// skipSuccessfulRequests and skipFailedRequests judge them.
const (
	CountAll       = "all"       // every admitted request (the default)
	CountSuccesses = "successes" // only those answered below 400
	CountFailures  = "failures"  // only those answered 400 or above
	// CountHeader followed by a header name ("header:X-Usage-Tokens")
	// counts the units the answer reports in that header, or in a trailer
	// of that name: a request is charged its cost when admitted, and once
	// answered the part of it the answer does not report is refunded, so
	// that the limit counts what each request used (tokens, rows, bytes)
	// and never more than its cost reserved. An answer that reports no
	// whole number of units (no such header, "12.5", "-1") is charged its
	// cost in full; one that reports more than the cost is charged the
	// cost. The cost is thus the most a request may use. A request whose
	// client left a leaky-bucket queue before its turn (Handler) was never
	// served and used nothing: its cost is refunded.
	CountHeader = "header:"
	// CountStatus followed by a list of statuses and classes
	// ("status:401,403", "status:4xx") counts only the requests answered
	// with one of them, as Cloudflare's counting expressions on the
	// response code do: "status:404" counts a scanner's misses and nothing
	// else. No answer (status 0) counts as a 500.
	CountStatus = "status:"
)

// countsOf returns the count of each limit name (a plan's or global
// limit's, or a rule's limit as "<rule>.<limit>") that Options.Count sets
// to anything but CountAll (o is valid), a rule's name standing for each
// of its limits; nil when it sets none.
func countsOf(o *Options) map[string]string {
	var counts map[string]string
	set := func(name, count string) {
		if count != CountAll {
			if counts == nil {
				counts = map[string]string{}
			}
			counts[name] = count
		}
	}
	for name, count := range o.Count {
		if !slices.ContainsFunc(o.Rules, func(r Rule) bool { return r.Name == name }) || limitNamed(o, name) {
			set(name, count) // a limit's name, not only a rule's
		}
		for _, r := range o.Rules {
			if r.Name == name {
				for _, l := range r.Limits {
					if _, own := o.Count[ruleLimit(r.Name, l).Name()]; !own {
						set(ruleLimit(r.Name, l).Name(), count)
					}
				}
			}
		}
	}
	return counts
}

// Counts returns how each limit that does not count every admitted request
// counts, by the limit's name (a rule's limit as "<rule>.<limit>"): the
// Options.Count entries other than CountAll, a rule's given to each of its
// limits not named on their own. It is a new map each call; empty when
// every limit counts all. A program that observes OnReported can create
// its metrics of the CountHeader limits from it before any answer comes.
func (m *Middleware) Counts() map[string]string {
	return maps.Clone(m.counts)
}

// limitNamed reports whether a plan's, a listed key's or a global limit of o
// is named name.
func limitNamed(o *Options, name string) bool {
	named := func(ls []sluice.Limit) bool {
		return slices.ContainsFunc(ls, func(l sluice.Limit) bool { return l.Name() == name })
	}
	if named(o.Global) {
		return true
	}
	for _, p := range o.Plans {
		if p != nil && named(p.Limits) {
			return true
		}
	}
	for _, k := range o.Keys {
		if k.Plan != nil && named(k.Plan.Limits) {
			return true
		}
	}
	return false
}

// count checks Count: each entry names a limit or a rule and says all,
// successes or failures; a limit counted by response must have an
// algorithm whose charges can be refunded exactly.
func (v *validator) count(o *Options) {
	named := map[string][]sluice.Limit{}
	add := func(name string, l sluice.Limit) {
		if !slices.Contains(named[name], l) {
			named[name] = append(named[name], l)
		}
	}
	for _, l := range o.Global {
		add(l.Name(), l)
	}
	plans := slices.Clone(o.Plans)
	for _, k := range o.Keys {
		plans = append(plans, k.Plan)
	}
	for _, p := range plans {
		if p != nil {
			for _, l := range p.Limits {
				add(l.Name(), l)
			}
		}
	}
	for _, r := range o.Rules {
		for _, l := range r.Limits {
			add(r.Name, l)
			add(ruleLimit(r.Name, l).Name(), l)
		}
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for name := range o.Count {
			if !yield(name) {
				return
			}
		}
	})
	for _, name := range names {
		field, count := fmt.Sprintf("Count[%q]", name), o.Count[name]
		header, byHeader := strings.CutPrefix(count, CountHeader)
		statuses, byStatus := strings.CutPrefix(count, CountStatus)
		var listErr error
		if byStatus {
			listErr = validStatuses(statuses)
		}
		switch {
		case byHeader && !validToken(header):
			v.errorf(field, "%q: %q is not a header name", count, header)
			continue
		case listErr != nil:
			v.errorf(field, "%q: %v", count, listErr)
			continue
		case !byHeader && !byStatus && count != CountAll && count != CountSuccesses && count != CountFailures:
			v.errorf(field, "%q is not a count (all, successes, failures, header:<Name> or status:<list>)", count)
			continue
		case named[name] == nil:
			v.errorf(field, "%q is neither a limit nor a rule", name)
			continue
		case count == CountAll:
			continue
		}
		what := "only " + count
		switch {
		case byHeader:
			what = "what header " + header + " reports"
		case byStatus:
			what = "only answers of status " + statuses
		}
		for _, l := range named[name] {
			if err := refundable(l); err != nil {
				v.errorf(field, "%s cannot count %s: %v", l.Name(), what, err)
			}
		}
	}
}

// refundable says why a limit's charges cannot be refunded exactly, or
// returns nil when they can (see sluice.Refunder).
func refundable(l sluice.Limit) error {
	switch a := l.Algorithm(); a {
	case sluice.AlgorithmFixedWindow, sluice.AlgorithmSlidingCounter, sluice.AlgorithmSlidingLog:
		return nil
	case sluice.AlgorithmConcurrency:
		return fmt.Errorf("a concurrency limit counts requests in flight, which it gives back as each ends anyway")
	default:
		return fmt.Errorf("a %v cannot refund a request exactly: it keeps only how much it misses, and while "+
			"it would have been full without the request its refill went to that request alone, so a refund "+
			"could give back more than was ever missing; use a fixed-window, sliding-window-log or "+
			"sliding-window-counter limit", a)
	}
}

// countsByResponse reports whether an admitted res has a check whose limit
// counts by response (Options.Count): only then is the answer's status
// worth recording.
func (m *Middleware) countsByResponse(res *Result) bool {
	if m.counts == nil || res.Exempt || !res.Decision.Allowed {
		return false
	}
	for i := range res.Checks {
		if m.counts[res.Checks[i].Limit.Name()] != "" && res.Decision.Statuses[i].Charged != 0 {
			return true
		}
	}
	return false
}

// DoneWithStatus ends an admitted request answered with status, as Done
// does, after refunding its limits that do not count that answer
// (Options.Count): a limit counting only failures gets back what a
// success (status below 400) spent, one counting only successes what a
// failure spent. Status 0 means no answer (the handler panicked, the call
// was abandoned) and counts as a failure. Callers of Decide and DecideFor
// call it instead of Done when they know the answer; a limit that counts a
// header (CountHeader) is then charged in full: DoneWithResponse passes
// the answer's header. A refund the store fails leaves the request
// counted, and is logged.
func (m *Middleware) DoneWithStatus(ctx context.Context, res *Result, status int) {
	m.DoneWithResponse(ctx, res, status, nil)
}

// DoneWithResponse is DoneWithStatus for an answer whose header (trailers
// included, under their names or http.TrailerPrefix) is h: a limit that
// counts a header (CountHeader) gets back the part of the request's cost
// that h does not report. A gRPC answer (Content-Type application/grpc in
// h), whose HTTP status is 200 whatever the call's outcome, is judged by
// its grpc-status instead (StatusOfGRPC); so is a gRPC-Web answer whose
// header has one (a trailers-only answer). Handler calls it when some limit
// of the request counts by response, with the header its next handler
// wrote, and for a gRPC-Web answer that sent its status at the end of its
// body, with the StatusOfGRPC of that status. On a Result kept by Keep it
// settles the Pending, unless that was settled already. On a Result
// already ended (by Done, Discard or the like, before any later request)
// it does nothing: a request's charges are settled at most once.
func (m *Middleware) DoneWithResponse(ctx context.Context, res *Result, status int, h http.Header) {
	if res == nil || res.pooled {
		return
	}
	switch {
	case res.kept != nil: // the settlement is the Pending's: at most once
		if err := res.kept.settle(ctx, answerStatus(status, h), h, true); err != nil {
			m.unrefunded(ctx, err, res.Identity.Subject)
		}
	case m.countsByResponse(res):
		m.refund(ctx, res, answerStatus(status, h), h, true)
	}
	m.Done(ctx, res)
}

// DoneUnserved ends an admitted request that was never served, as Handler
// ends one whose client left a leaky-bucket queue before its turn: it has
// no answer (status 0, a failure, for the limits that count statuses, as
// DoneWithStatus counts it), and the limits that count what the answer
// reports (CountHeader) get its whole cost back, nothing having been used,
// without OnReported, which sees answers. Callers of Decide call it
// instead of Done when the work the decision admitted never started. A
// refund the store fails leaves the request counted, and is logged. On a
// Result kept by Keep it settles the Pending so, unless that was settled
// already; on a Result already ended it does nothing, as DoneWithResponse.
func (m *Middleware) DoneUnserved(ctx context.Context, res *Result) {
	if res == nil || res.pooled {
		return
	}
	switch {
	case res.kept != nil: // the settlement is the Pending's: at most once
		if err := res.kept.settle(ctx, 0, nil, false); err != nil {
			m.unrefunded(ctx, err, res.Identity.Subject)
		}
	case m.countsByResponse(res):
		m.refund(ctx, res, 0, nil, false)
	}
	m.Done(ctx, res)
}

// refund gives back the charges of res's checks whose limits do not count
// a request answered with status (a success below 400, a failure from 400
// on, or one of the statuses of their list), and the part of their cost
// that h does not report for the limits that count a header (all of it
// when the request was not served: it used nothing).
func (m *Middleware) refund(ctx context.Context, res *Result, status int, h http.Header, served bool) {
	lowered, err := m.settle(ctx, res.Checks, &res.Decision, status, h, served)
	if lowered {
		// A check now says what was given back: the pooled Result must not
		// take it for the checks of its next request.
		res.checksOf = nil
	}
	if err != nil {
		m.unrefunded(ctx, err, res.Identity.Subject)
	}
}

// unrefunded logs err, the failed refund of a request of subject that
// stays counted.
func (m *Middleware) unrefunded(ctx context.Context, err error, subject string) {
	m.warn(ctx, "request counted although its limit does not count its answer: the refund failed",
		"err", err, "subject", subject)
}

// settle refunds, of d's charges of checks, those the answer (status, h)
// does not count, as refund does for a Result; a request not served
// (served false) used nothing of the limits that count a header. It
// reports whether it lowered a check's Cost to the part it gave back, and
// the store's error when the refund failed (the charges then stand).
func (m *Middleware) settle(ctx context.Context, checks []sluice.Check, d *sluice.Decision, status int, h http.Header,
	served bool) (lowered bool, err error) {
	skip := CountSuccesses // the count that keeps the charge
	if status > 0 && status < 400 {
		skip = CountFailures
	}
	any := false
	for i := range checks {
		st, c := &d.Statuses[i], &checks[i]
		switch count := m.counts[c.Limit.Name()]; {
		case count == skip:
			any = any || st.Charged != 0
		case strings.HasPrefix(count, CountStatus) && !statusCounted(count[len(CountStatus):], status):
			any = any || st.Charged != 0
		case strings.HasPrefix(count, CountHeader) && st.Charged != 0:
			used, reported := int64(0), true // not served: nothing used
			if served {
				used, reported = usedOf(h, count[len(CountHeader):])
				if m.onReported != nil {
					m.onReported(c.Limit.Name(), c.Cost, used, reported)
				}
			}
			if back := c.Cost - min(used, c.Cost); reported && back > 0 {
				c.Cost, lowered, any = back, true, true
			} else {
				st.Charged = 0
			}
		default:
			st.Charged = 0
		}
	}
	if !any {
		return lowered, nil
	}
	return lowered, m.limiter.Refund(context.WithoutCancel(ctx), checks, d)
}

// serveCounted serves an admitted request whose limits count by response:
// next answers through res's statusWriter, and the request ends with the
// status it wrote (200 if none; 0, a failure, if next panicked).
func (m *Middleware) serveCounted(w http.ResponseWriter, r *http.Request, res *Result, next http.Handler) {
	res.answer = statusWriter{ResponseWriter: w}
	defer m.endCounted(r.Context(), res)
	next.ServeHTTP(&res.answer, r)
	res.answer.served = true
}

// endCounted ends a request served by serveCounted with its answer.
func (m *Middleware) endCounted(ctx context.Context, res *Result) {
	status, h := res.answer.code, res.answer.Header()
	switch {
	case !res.answer.served:
		status = 0 // next panicked
	case status == 0:
		status = http.StatusOK
	}
	if code, ok := res.answer.web.Code(); ok && status == http.StatusOK {
		status = StatusOfGRPC(code) // a gRPC-Web answer's, from the end of its body
	}
	res.answer = statusWriter{}
	m.DoneWithResponse(ctx, res, status, h)
}

// statusWriter records the final status written through it (a 101
// Switching Protocols counts; other 1xx do not). It unwraps for
// http.ResponseController, through which net/http/httputil.ReverseProxy
// flushes and hijacks. A Result holds one, so that recording costs no
// allocation.
type statusWriter struct {
	http.ResponseWriter
	code   int
	served bool // the handler returned
	// web reads the status at the end of a gRPC-Web answer's body.
	web grpcweb.Status
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 && (code >= 200 || code == http.StatusSwitchingProtocols) {
		w.code = code
		w.web.Reset(w.Header().Get("Content-Type"))
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
		w.web.Reset(w.Header().Get("Content-Type"))
	}
	w.web.Write(b)
	return w.ResponseWriter.Write(b)
}

// Flush flushes the response, if the writer beneath can. A flush before
// any status sends a 200, as net/http does, and a WriteHeader after it is
// not recorded: the client never sees its status.
func (w *statusWriter) Flush() {
	if err := http.NewResponseController(w.ResponseWriter).Flush(); err == nil && w.code == 0 {
		w.code = http.StatusOK
		w.web.Reset(w.Header().Get("Content-Type"))
	}
}

// Hijack hands the connection to the handler, where the writer beneath
// can, so that a handler asserting http.Hijacker (a WebSocket library's
// upgrade) works as it does unwrapped; it returns an error wrapping
// http.ErrNotSupported where the writer beneath cannot (HTTP/2). A
// hijacked request whose handler wrote no status through the writer is
// answered 200.
func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

// Unwrap returns the writer beneath, for http.ResponseController.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// usedOf returns the units that header (or the trailer) name of h reports
// as used, and whether it reports a whole number of them (≥ 0). A
// trailer, sent after the body, wins over a header of the same name. Names
// are matched in any case, an unannounced trailer's (http.TrailerPrefix)
// too, which http.Header does not canonicalize.
func usedOf(h http.Header, name string) (used int64, ok bool) {
	v := trailerValue(h, name)
	if v == "" {
		vs := h.Values(name)
		if len(vs) == 0 {
			return 0, false
		}
		v = vs[len(vs)-1]
	}
	used, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || used < 0 {
		return 0, false
	}
	return used, true
}

// trailerValue returns the first value of the unannounced trailer name of
// h (http.TrailerPrefix and the name, in any case), or "".
func trailerValue(h http.Header, name string) string {
	if vs := h[http.TrailerPrefix+http.CanonicalHeaderKey(name)]; len(vs) > 0 {
		return vs[0]
	}
	for k, vs := range h {
		if len(vs) > 0 && len(k) == len(http.TrailerPrefix)+len(name) && strings.EqualFold(k, http.TrailerPrefix+name) {
			return vs[0]
		}
	}
	return ""
}

// statusCounted reports whether list (CountStatus's: statuses and classes
// such as "4xx", comma-separated) holds status; no answer (0) is a 500.
func statusCounted(list string, status int) bool {
	if status == 0 {
		status = http.StatusInternalServerError
	}
	for list != "" {
		var item string
		item, list, _ = strings.Cut(list, ",")
		item = strings.TrimSpace(item)
		if len(item) == 3 && item[1:] == "xx" {
			if int(item[0]-'0') == status/100 {
				return true
			}
		} else if n, err := strconv.Atoi(item); err == nil && n == status {
			return true
		}
	}
	return false
}

// validStatuses says what is wrong with a CountStatus list, or returns nil:
// each item a status from 100 to 599 or a class from 1xx to 5xx.
func validStatuses(list string) error {
	if strings.TrimSpace(list) == "" {
		return fmt.Errorf("no status listed (e.g. status:401,403 or status:4xx)")
	}
	for item := range strings.SplitSeq(list, ",") {
		item = strings.TrimSpace(item)
		if len(item) == 3 && item[1:] == "xx" && item[0] >= '1' && item[0] <= '5' {
			continue
		}
		if n, err := strconv.Atoi(item); err != nil || n < 100 || n > 599 {
			return fmt.Errorf("%q is neither a status (100 to 599) nor a class (1xx to 5xx)", item)
		}
	}
	return nil
}
