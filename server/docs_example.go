package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dunglas/httpsfv"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/degrade"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// docsExample is what the real limiter answered a client of one plan: the
// headers of its first request, the IETF fields of them read back, and the
// headers and body of its first refusal.
type docsExample struct {
	AllowedHeaders []string
	Fields         []docsField
	// RefusedStatus is the refusal's status line ("HTTP/1.1 429 Too Many
	// Requests"); empty when no request was refused.
	RefusedStatus  string
	RefusedHeaders []string
	RefusedBody    string
}

// docsField is one policy of the RateLimit-Policy and RateLimit headers:
// its name and its q, w, r and t parameters as sent (empty when absent).
type docsField struct {
	Name, Q, W, R, T string
}

// runExample produces real headers and a real 429 body for plan: a fresh
// client's first request, then another client's requests until one is
// refused, the first of them spending the plan's smallest burst. Where
// leases says the store in force leases a bucket, the middleware states
// its shared burst, as the live one does, and the example's store decides
// it by that burst, as the shared state does (sharedExampleStore).
func runExample(cfg *config.Config, plan string, leases docsLeases) (docsExample, error) {
	var ex docsExample
	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return at }
	store := &sharedExampleStore{Store: memory.New(memory.WithClock(clock), memory.WithSweepInterval(0))}
	defer store.Close()
	o := cfg.HTTPLimitOptions()
	o.Clock, o.Logger = clock, slog.New(slog.NewTextHandler(io.Discard, nil))
	o.StoreLeases, o.StoreLeased, o.StoreLeaseMaxAge = leases.leased != nil, leases.leased, leases.maxAge
	mw, err := httplimit.New(sluice.NewLimiter(store), o)
	if err != nil {
		return ex, err
	}
	store.stated = mw.Stated
	ctx := context.Background()
	res, err := mw.DecideFor(ctx, httplimit.Requester{Subject: "docs-example-first", Plan: plan}, "GET", "/example", 1)
	if err != nil {
		return ex, err
	}
	h := http.Header{}
	mw.WriteHeaders(h, res)
	mw.Discard(res)
	ex.AllowedHeaders = headerLines(h)
	ex.Fields = ietfFields(h)

	p := cfg.Policy.Plan(plan)
	smallest := int64(sluice.MaxQuantity)
	for _, l := range append(p.Limits[:len(p.Limits):len(p.Limits)], cfg.Policy.Global...) {
		if !l.Shadow() {
			smallest = min(smallest, leases.stated(l, "").Burst())
		}
	}
	client := httplimit.Requester{Subject: "docs-example", Plan: plan}
	for i := range 10 {
		cost := int64(1)
		if i == 0 {
			cost = smallest
		}
		res, err := mw.DecideFor(ctx, client, "GET", "/example", cost)
		if err != nil {
			return ex, err
		}
		if res.Decision.Allowed {
			mw.Discard(res)
			continue
		}
		w := httptest.NewRecorder()
		mw.Refuse(w, httptest.NewRequest("GET", "/example", nil), res)
		mw.Discard(res)
		ex.RefusedStatus = statusLine(w.Code)
		ex.RefusedHeaders = headerLines(w.Header())
		ex.RefusedBody = indentJSON(w.Body.Bytes())
		break
	}
	return ex, nil
}

// sharedExampleStore is the example's store: it decides each check by the
// limit the middleware states for it (httplimit.Middleware.Stated; nil:
// the check's own), so that a bucket the store in force leases is decided
// by its shared burst, as the shared state decides every check of it. It
// holds no lease: what it reports remaining is what the shared state
// would, with no units held by an instance.
type sharedExampleStore struct {
	*memory.Store
	stated func(sluice.Limit) sluice.Limit
}

// Apply implements sluice.Store.
func (s *sharedExampleStore) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	return s.Store.Apply(ctx, s.shared(checks), out)
}

// Refund implements sluice.Refunder.
func (s *sharedExampleStore) Refund(ctx context.Context, checks []sluice.Check, charged []int64) error {
	return s.Store.Refund(ctx, s.shared(checks), charged)
}

// shared returns checks with each limit as stated, a copy when one differs.
func (s *sharedExampleStore) shared(checks []sluice.Check) []sluice.Check {
	if s.stated == nil {
		return checks
	}
	cs := checks
	for i := range checks {
		if st := s.stated(checks[i].Limit); st != checks[i].Limit {
			if &cs[0] == &checks[0] {
				cs = slices.Clone(checks)
			}
			cs[i].Limit = st
		}
	}
	return cs
}

// ietfFields reads the IETF RateLimit-Policy and RateLimit fields of h
// back, policy by policy; nil when h has none (another header mode).
func ietfFields(h http.Header) []docsField {
	policies, err := httpsfv.UnmarshalList(h.Values("Ratelimit-Policy"))
	if err != nil {
		return nil
	}
	states, err := httpsfv.UnmarshalList(h.Values("Ratelimit"))
	if err != nil {
		return nil
	}
	param := func(m httpsfv.Member, name string) string {
		it, ok := m.(httpsfv.Item)
		if !ok {
			return ""
		}
		v, ok := it.Params.Get(name)
		if !ok {
			return ""
		}
		if n, ok := v.(int64); ok {
			return strconv.FormatInt(n, 10)
		}
		return ""
	}
	name := func(m httpsfv.Member) string {
		if it, ok := m.(httpsfv.Item); ok {
			if s, ok := it.Value.(string); ok {
				return s
			}
		}
		return ""
	}
	var out []docsField
	for _, p := range policies {
		f := docsField{Name: name(p), Q: param(p, "q"), W: param(p, "w")}
		for _, st := range states {
			if name(st) == f.Name {
				f.R, f.T = param(st, "r"), param(st, "t")
			}
		}
		out = append(out, f)
	}
	return out
}

// describeDegradation says what an overloaded service answers, with a real
// 503 of the highest level for the example.
func describeDegradation(cfg *config.Config) docsDegradation {
	g := cfg.Degradation
	if !g.Enabled {
		return docsDegradation{}
	}
	d := docsDegradation{Enabled: true, Factor: strconv.FormatFloat(g.Factor, 'f', -1, 64),
		FactorMaxWindow: httplimit.FormatWindow(g.FactorMaxWindow),
		Expensive:       g.Expensive, Critical: g.Critical}
	if d.RetryAfter, d.RetryAfterMost = shedWait(cfg); d.RetryAfterMost == d.RetryAfter {
		d.RetryAfterMost = 0 // not spread
	}
	classes, err := newDegradeState(g, nil)
	if err != nil {
		return d // config validated the patterns
	}
	st := &state{cfg: cfg, degrade: classes}
	r := httptest.NewRequest("POST", "/example", nil)
	if refuse, why := st.shed(degrade.Critical, r); refuse {
		w := httptest.NewRecorder()
		(&Server{}).reducedCapacity(w, r, st, why)
		var b strings.Builder
		b.WriteString(statusLine(w.Code) + "\n")
		for _, l := range headerLines(w.Header()) {
			b.WriteString(l + "\n")
		}
		b.WriteString("\n" + indentJSON(w.Body.Bytes()))
		d.Example = b.String()
	}
	return d
}

func statusLine(code int) string {
	return "HTTP/1.1 " + strconv.Itoa(code) + " " + http.StatusText(code)
}

func indentJSON(body []byte) string {
	var pretty bytes.Buffer
	if json.Indent(&pretty, body, "", "  ") != nil {
		return string(body)
	}
	return pretty.String()
}

func headerLines(h http.Header) []string {
	var out []string
	for k, vs := range h {
		if k == "Content-Length" {
			continue
		}
		out = append(out, k+": "+strings.Join(vs, ", "))
	}
	sort.Strings(out)
	return out
}
