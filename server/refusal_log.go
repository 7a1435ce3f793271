package server

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/httplimit"
)

// refusalLog bounds the lines the server logs of the requests it refuses
// to log.refusals_per_second, by the wall clock's second; the lines it left
// out are counted until flush says how many.
type refusalLog struct {
	mu      sync.Mutex
	second  int64     // Unix second of written
	written int       // lines written in second
	left    int64     // lines left out since the last summary
	said    time.Time // when the last summary was written
}

// take reports whether one more line fits in perSecond for the second of
// now, on the wall clock.
func (l *refusalLog) take(perSecond int, now time.Time) bool {
	if perSecond <= 0 {
		return false
	}
	sec := now.Unix()
	l.mu.Lock()
	defer l.mu.Unlock()
	if sec != l.second {
		l.second, l.written = sec, 0
	}
	if l.written < perSecond {
		l.written++
		return true
	}
	l.left++
	return false
}

// summarize flushes the summaries of the refusal log, of the HTTP
// servers' errors and of the upstream's failures once a second until ctx
// is done; Serve flushes them once more when it has drained (see
// lastSummaries).
func (s *Server) summarize(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.refusals.flush(s.log, s.Config().Log.RefusalsPerSecond)
			s.serverErrors.flush()
			s.upstreamFailures.flush()
		}
	}
}

// lastSummaries flushes the summaries of the refusal log, of the HTTP
// servers' errors and of the upstream's failures however recent the last
// one is: the server has stopped, and no later summary would say the lines
// left out of its last second and of its drain.
func (s *Server) lastSummaries() {
	if left := s.refusals.summary(time.Now(), true); left > 0 {
		s.refusals.say(s.log, s.Config().Log.RefusalsPerSecond, left)
	}
	s.serverErrors.flushLast()
	s.upstreamFailures.flushLast()
}

// flush logs how many lines were left out since the last summary, if any,
// at most once a second.
func (l *refusalLog) flush(log *slog.Logger, perSecond int) {
	l.flushAt(log, perSecond, time.Now())
}

// flushAt is flush at now.
func (l *refusalLog) flushAt(log *slog.Logger, perSecond int, now time.Time) {
	if left := l.summary(now, false); left > 0 {
		l.say(log, perSecond, left)
	}
}

// say logs that left refusals were left out of the log, past perSecond.
func (l *refusalLog) say(log *slog.Logger, perSecond int, left int64) {
	log.Info("refusals not logged", "count", left, "refusals_per_second", perSecond)
}

// summary returns how many lines were left out since the last summary, and
// counts them said, or 0 when there are none or, unless last, the last
// summary is less than a second old.
func (l *refusalLog) summary(now time.Time, last bool) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	left := l.left
	if left == 0 || !last && now.Sub(l.said) < time.Second && now.After(l.said) {
		return 0
	}
	l.left, l.said = 0, now
	return left
}

// viaKey is the context key of the surface that refused a request, when it
// is not the proxy (onRefusal).
type viaKey struct{}

// onRefusal is the middleware's OnRefusal: a refusal of the proxy, or of
// forward-auth (whose request says so, see viaKey).
func (s *Server) onRefusal(r *http.Request, res *httplimit.Result, status int) {
	via, _ := r.Context().Value(viaKey{}).(string)
	if via == "" {
		via = "proxy"
	}
	s.logRefusal(via, r.Method, r.URL.Path, requestID(r.Header), res, status)
}

// maxRequestID bounds the X-Request-Id a refusal line repeats, in bytes.
const maxRequestID = 128

// requestID returns h's X-Request-Id (as a front proxy such as Envoy sets
// it), cut to maxRequestID bytes, to find the line from the proxy's logs.
func requestID(h http.Header) string {
	id := h.Get("X-Request-Id")
	if len(id) > maxRequestID {
		id = id[:maxRequestID]
	}
	return id
}

// maxLoggedPath and maxLoggedMethod bound the path and the method a
// refusal line repeats, in bytes: the client chooses them, up to the
// listener's header bound.
const (
	maxLoggedPath   = 1024
	maxLoggedMethod = 32
)

// cutText returns s cut to at most n bytes, between two characters (unless
// s is not UTF-8 there), with "…" after it when it was cut.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for i := 1; i < utf8.UTFMax && n > 0 && !utf8.RuneStart(s[n]); i++ {
		n--
	}
	return s[:n] + "…"
}

// withVia returns r marked as refused by via, for onRefusal.
func withVia(r *http.Request, via string) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), viaKey{}, via))
}

// logRefusal logs a refused HTTP request, within log.refusals_per_second:
// the surface, the status written (none for the decision API, which
// answers its caller), the method and path (never the query, which may
// carry credentials; cut to maxLoggedMethod and maxLoggedPath bytes), the
// client as its Subject (an API key only as its hash) and its key's name,
// plan, the limits that refused, the wait (none when no wait admits the
// request), the request's X-Request-Id (id) when it has one, and
// store_unavailable when a limit was refused because the store could not
// decide it (on_store_error deny), not by its quota.
func (s *Server) logRefusal(via, method, path, id string, res *httplimit.Result, status int) {
	perSecond := s.Config().Log.RefusalsPerSecond
	if !s.refusals.take(perSecond, time.Now()) {
		return
	}
	attrs := []any{"via", via}
	if status > 0 {
		attrs = append(attrs, "status", status)
	}
	attrs = append(attrs, "method", cutText(method, maxLoggedMethod), "path", cutText(path, maxLoggedPath), "subject", res.Identity.Subject, "plan", planName(res.Identity.Plan),
		"limits", res.Decision.Violated)
	if wait := res.RetryAfter(); wait != sluice.Never {
		attrs = append(attrs, "retry_after_s", ceilSeconds(wait))
	}
	if res.Identity.KeyName != "" {
		attrs = append(attrs, "key_name", res.Identity.KeyName)
	}
	if id != "" {
		attrs = append(attrs, "request_id", id)
	}
	if res.Penalized {
		attrs = append(attrs, "penalty", true)
	}
	if storeRefusedAny(res.Decision.Statuses) {
		attrs = append(attrs, "store_unavailable", true)
	}
	s.log.Info("request refused", attrs...)
}

// logEnvoyRefusal logs a refused Envoy request, within
// log.refusals_per_second: its domain and the limits that refused, not its
// descriptors' values, which may carry credentials, and store_unavailable
// when the store could not decide them.
func (s *Server) logEnvoyRefusal(res *envoy.Result) {
	if !s.refusals.take(s.Config().Log.RefusalsPerSecond, time.Now()) {
		return
	}
	var limits []string
	unavailable := false
	for _, o := range res.Descriptors {
		if o.Result == resultLimited {
			limits = append(limits, o.Limit)
			unavailable = unavailable || o.Unavailable
		}
	}
	attrs := []any{"via", "envoy", "domain", res.Domain, "limits", limits}
	if unavailable {
		attrs = append(attrs, "store_unavailable", true)
	}
	s.log.Info("request refused", attrs...)
}

// storeRefusedAny reports whether a status of statuses was refused because
// no store could decide it (sluice.Status.Unavailable: a failover's deny),
// not by its limit.
func storeRefusedAny(statuses []sluice.Status) bool {
	for i := range statuses {
		if !statuses[i].Allowed && statuses[i].Unavailable {
			return true
		}
	}
	return false
}

func planName(p *httplimit.Plan) string {
	if p == nil {
		return ""
	}
	return p.Name
}

// ceilSeconds is d in whole seconds, rounded up.
func ceilSeconds(d time.Duration) int64 {
	return int64((d + time.Second - 1) / time.Second)
}
