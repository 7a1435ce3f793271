package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// docsPage is the client documentation generated from the live
// configuration, with header and body examples produced by running the real
// limiter on a private store.
type docsPage struct {
	html []byte
}

type docsPlan struct {
	Name, Role string
	Limits     []docsLimit
	Costs      []docsCost
	Upgrade    *sluice.Upgrade
}

type docsLimit struct {
	Name, Rule, Algorithm, Note string
}

type docsCost struct {
	Endpoint string
	Cost     int64
}

type docsData struct {
	Plans        []docsPlan
	Global       []docsLimit
	Exempt       []string
	Identity     config.Identity
	Modes        []string
	Example      docsExample
	DocsURL      string
	GeneratedFor string
}

type docsExample struct {
	Plan           string
	AllowedHeaders []string
	RefusedHeaders []string
	RefusedBody    string
}

func newDocsPage(cfg *config.Config) (*docsPage, error) {
	data := docsData{Exempt: cfg.Exempt, Identity: cfg.Identity, Modes: cfg.Response.Headers,
		DocsURL: cfg.Response.DocsURL, GeneratedFor: cfg.File}
	for _, p := range cfg.Policy.Plans {
		dp := docsPlan{Name: p.Name, Upgrade: p.Upgrade}
		switch p.Name {
		case cfg.Policy.DefaultPlan:
			dp.Role = "default for identified clients"
		case cfg.Policy.AnonymousPlan:
			dp.Role = "clients known only by IP address"
		}
		for _, l := range p.Limits {
			dp.Limits = append(dp.Limits, describeLimit(l, countsUnits(p)))
		}
		for ep, c := range p.Costs {
			dp.Costs = append(dp.Costs, docsCost{ep, c})
		}
		sort.Slice(dp.Costs, func(i, j int) bool { return dp.Costs[i].Endpoint < dp.Costs[j].Endpoint })
		data.Plans = append(data.Plans, dp)
	}
	globalUnits := slices.ContainsFunc(cfg.Policy.Plans, countsUnits)
	for _, l := range cfg.Policy.Global {
		data.Global = append(data.Global, describeLimit(l, globalUnits))
	}
	ex, err := runExample(cfg)
	if err != nil {
		return nil, err
	}
	data.Example = ex
	tmpl, err := docsTemplate()
	if err != nil {
		return nil, fmt.Errorf("the docs page's template: %w", err)
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, data); err != nil {
		return nil, err
	}
	return &docsPage{html: buf.Bytes()}, nil
}

// countsUnits reports whether some endpoint of p costs more than 1: its
// limits then count units, not requests (as its 429 bodies say).
func countsUnits(p *sluice.Plan) bool {
	for _, c := range p.Costs {
		if c > 1 {
			return true
		}
	}
	return false
}

// describeLimit describes l, whose quantity counts units when units is
// true, else requests.
func describeLimit(l sluice.Limit, units bool) docsLimit {
	what := "requests per"
	if units {
		what = "units per"
	}
	d := docsLimit{Name: l.Name(), Algorithm: l.Algorithm().String(),
		Rule: strings.TrimSpace(strings.Join([]string{itoa(l.Quantity()), what, httplimit.FormatWindow(l.Window())}, " "))}
	switch l.Algorithm() {
	case sluice.AlgorithmFixedWindow:
		d.Note = "counted in fixed windows that start on the clock (the minute, the UTC day)"
	case sluice.AlgorithmSlidingLog:
		d.Note = "counted over the last " + httplimit.FormatWindow(l.Window()) + " exactly"
	case sluice.AlgorithmSlidingCounter:
		d.Note = "counted over a sliding window (estimated from the current and the previous window)"
	case sluice.AlgorithmTokenBucket, sluice.AlgorithmGCRA:
		d.Note = "bursts of up to " + itoa(l.Burst()) + ", refilled steadily"
	case sluice.AlgorithmLeakyBucket:
		d.Note = "bursts of up to " + itoa(l.Burst()) + ", drained steadily"
		if l.MaxWait() > 0 {
			d.Note += "; beyond that requests wait up to " + l.MaxWait().String() + " instead of being refused"
		}
	}
	if l.Shadow() {
		d.Note += " — trial: reported in headers, never enforced"
	}
	return d
}

// runExample produces real headers and a real 429 body for the default
// plan, by spending its smallest burst on a private store.
func runExample(cfg *config.Config) (docsExample, error) {
	plan := cfg.Policy.Plan(cfg.Policy.DefaultPlan)
	ex := docsExample{Plan: plan.Name}
	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return at }
	store := memory.New(memory.WithClock(clock), memory.WithSweepInterval(0))
	o := cfg.HTTPLimitOptions()
	o.Clock, o.Logger = clock, slog.New(slog.NewTextHandler(io.Discard, nil))
	mw, err := httplimit.New(sluice.NewLimiter(store), o)
	if err != nil {
		return ex, err
	}
	smallest := int64(sluice.MaxQuantity)
	for _, l := range append(plan.Limits[:len(plan.Limits):len(plan.Limits)], cfg.Policy.Global...) {
		if !l.Shadow() {
			smallest = min(smallest, l.Burst())
		}
	}
	client := httplimit.Client{Subject: "docs-example", Plan: plan.Name}
	for i := 0; i < 10; i++ {
		cost := int64(1)
		if i == 0 {
			cost = smallest
		}
		res, err := mw.DecideClient(context.Background(), client, "GET", "/example", cost)
		if err != nil {
			return ex, err
		}
		if res.Decision.Allowed {
			if i == 0 {
				h := http.Header{}
				mw.WriteHeaders(h, res)
				ex.AllowedHeaders = headerLines(h)
			}
			mw.Release(res)
			continue
		}
		w := httptest.NewRecorder()
		mw.Refuse(w, httptest.NewRequest("GET", "/example", nil), res)
		mw.Release(res)
		ex.RefusedHeaders = headerLines(w.Header())
		var pretty bytes.Buffer
		json.Indent(&pretty, w.Body.Bytes(), "", "  ")
		ex.RefusedBody = pretty.String()
		break
	}
	return ex, nil
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

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func (s *Server) handleDocs(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(s.state.Load().docs.html)
}
