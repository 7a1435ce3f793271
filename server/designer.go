package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strconv"
	"time"

	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/sim"
)

// designerMaxBody bounds a designer request's body: a CSV trace up to 1 MiB.
const designerMaxBody = 1 << 20

// designerLimits bound the designer's simulations (POST /designer/run), so
// that the page stays responsive and its visitors cannot take the CPU the
// decisions need. A zero field takes its default (withDefaults).
type designerLimits struct {
	// concurrency is the most simulations admitted at once; more are
	// refused at once (503). Default: one per core, runtime.GOMAXPROCS(0)
	// when the designer is built.
	concurrency int
	// workers is the most simulations computing at once, each on one
	// goroutine locked to a thread of lower priority (sim.Request.
	// Background); an admitted simulation waits for a worker within its
	// timeout. Default: half the cores, at least 1, so that the Go
	// scheduler always has cores for the decisions and the kernel runs
	// them first on the others.
	workers int
	// maxArrivals bounds the requests one simulation replays
	// (sim.Request.MaxArrivals). Default 200,000.
	maxArrivals int
	// maxWork bounds one simulation's estimated work, in decisions
	// (sim.Request.MaxWork). Default 10,000,000: about 1.5 s of one core.
	maxWork int64
	// timeout bounds one simulation's time from its admission, waiting
	// for a worker included; past it the run stops and is answered 503.
	// Default 10 s.
	timeout time.Duration
}

// withDefaults returns l with every field ≤ 0 set to its default.
func (l designerLimits) withDefaults() designerLimits {
	if l.concurrency <= 0 {
		l.concurrency = runtime.GOMAXPROCS(0)
	}
	if l.workers <= 0 {
		l.workers = max(runtime.GOMAXPROCS(0)/2, 1)
	}
	l.workers = min(l.workers, l.concurrency)
	if l.maxArrivals <= 0 {
		l.maxArrivals = 200_000
	}
	if l.maxWork <= 0 {
		l.maxWork = 10_000_000
	}
	if l.timeout <= 0 {
		l.timeout = 10 * time.Second
	}
	return l
}

// designer serves POST /designer/run within its limits. It is safe for
// concurrent use.
type designer struct {
	limits  designerLimits
	slots   chan struct{} // a token per admitted simulation
	imports chan struct{} // a token per import being translated
	workers chan struct{} // a token per computing simulation
	// running, when set, is called with a run's context once the run holds
	// its slot and a worker, before it simulates (a test holds runs there).
	running func(ctx context.Context)
}

// newDesigner returns a designer bounded by limits (defaults applied).
func newDesigner(limits designerLimits) *designer {
	limits = limits.withDefaults()
	return &designer{limits: limits, slots: make(chan struct{}, limits.concurrency), imports: make(chan struct{}, limits.concurrency),
		workers: make(chan struct{}, limits.workers)}
}

// errDesignerBusy is a run refused because every slot is taken.
var errDesignerBusy = errors.New("designer busy")

// designerResponse is what the page draws: the simulator's result and its
// SVG chart, and the trace lines skipped under skip_bad_lines (at most
// sim.MaxSkippedLines, the last counting the others).
type designerResponse struct {
	Result  *sim.Result     `json:"result"`
	Chart   string          `json:"chart_svg"`
	Skipped []sim.LineError `json:"skipped,omitempty"`
	// Note says how the pattern replayed differs from the one asked for,
	// fitted to the designer's bounds (fitPattern); empty when it does not.
	Note string `json:"note,omitempty"`
}

// designerProblem is an RFC 9457 body with, for a simulation above a
// bound, the bound's name ("requests" or "work"), its value and the
// simulation's estimated size in the same unit.
type designerProblem struct {
	problem
	Bound    string `json:"bound,omitempty"`
	Max      int64  `json:"max,omitempty"`
	Estimate int64  `json:"estimate,omitempty"`
}

// handleDesignerRun runs a simulation (POST /designer/run, a sim.Request
// as JSON) through the real algorithms and returns the table data and the
// chart.
func (s *Server) handleDesignerRun(w http.ResponseWriter, r *http.Request) {
	s.designer.handleRun(w, r)
}

// handleRun answers a simulation request: 200 with the result; 400 for a
// request that is not a simulation; 413 for a body above designerMaxBody;
// 422 for a simulation above a bound (refused before it runs), but for a
// built-in pattern sized by its defaults, which is fitted to the bounds
// and run, the answer's note saying how (fitPattern); 503 with
// Retry-After when every slot is taken or when the run did not finish
// within the timeout (the server's load, never the request's fault).
func (d *designer) handleRun(w http.ResponseWriter, r *http.Request) {
	var req sim.Request
	if !decodeDesignerBody(w, r, &req, "a simulation") {
		return
	}
	req.Chart = "svg"
	req.MaxArrivals, req.MaxWork = d.limits.maxArrivals, d.limits.maxWork
	req.TraceReader = nil
	asked, fit := req, sizedByDefault(req)
	req, err := fitToBounds(req)
	if err != nil {
		writeSimError(w, err)
		return
	}
	resp, req, err := d.simulate(r.Context(), req, fit)
	switch {
	case err == nil:
		out := designerResponse{Result: resp.Result, Chart: string(resp.Chart), Skipped: resp.Skipped}
		if fit {
			out.Note = fitNote(asked, req, d.limits)
		}
		writeJSON(w, http.StatusOK, out)
	case errors.Is(err, errDesignerBusy):
		w.Header().Set("Retry-After", "1")
		writeDesignerProblem(w, designerProblem{problem: problem{Type: httplimit.ProblemReducedCapacity,
			Title: "Service Unavailable", Status: http.StatusServiceUnavailable,
			Detail: fmt.Sprintf("The designer is running %d simulations, the most it runs at once; retry in a second.", d.limits.concurrency)}})
	case r.Context().Err() != nil:
		// The client went away: nobody reads an answer.
	case errors.Is(err, context.DeadlineExceeded):
		w.Header().Set("Retry-After", strconv.Itoa(int(max(d.limits.timeout.Round(time.Second)/time.Second, 1))))
		writeDesignerProblem(w, designerProblem{problem: problem{Type: httplimit.ProblemReducedCapacity,
			Title: "Service Unavailable", Status: http.StatusServiceUnavailable,
			Detail: fmt.Sprintf("The simulation did not finish within %v: the server is busy. Retry later.", d.limits.timeout)}})
	default:
		writeSimError(w, err)
	}
}

// decodeDesignerBody decodes r's JSON body, of at most designerMaxBody
// bytes and no unknown field, into v, and reports whether it could;
// otherwise it has answered 400, or 413 for a body too large, saying the
// body is not what it should be ("a simulation": "not a simulation
// request").
func decodeDesignerBody(w http.ResponseWriter, r *http.Request, v any, what string) bool {
	if status, err := readJSON(w, r, designerMaxBody, v); err != nil {
		writeJSONProblem(w, status, http.StatusText(status), fmt.Sprintf("not %s request: %v", what, err))
		return false
	}
	return true
}

// simulate runs req in a free slot, on one worker, within the timeout, or
// returns errDesignerBusy at once when no slot is free. With fit, a
// pattern whose traffic, once built, is above a bound is fitted to the
// bounds (fitPattern) and run again. It returns the request it ran.
func (d *designer) simulate(ctx context.Context, req sim.Request, fit bool) (*sim.Response, sim.Request, error) {
	select {
	case d.slots <- struct{}{}:
	default:
		return nil, req, errDesignerBusy
	}
	defer func() { <-d.slots }()
	ctx, cancel := context.WithTimeout(ctx, d.limits.timeout)
	defer cancel()
	select {
	case d.workers <- struct{}{}:
	case <-ctx.Done():
		return nil, req, ctx.Err()
	}
	defer func() { <-d.workers }()
	if d.running != nil {
		d.running(ctx)
	}
	req.Background = true // one goroutine, on a thread of lower priority
	for tries := 0; ; tries++ {
		resp, err := sim.Simulate(ctx, req)
		var tl *sim.TooLargeError
		if !fit || tries == fitTries || !errors.As(err, &tl) {
			return resp, req, err
		}
		fitted, ok := fitPattern(req, tl)
		if !ok {
			return resp, req, err
		}
		req = fitted
	}
}

// writeSimError answers a simulation the request's parameters make
// impossible: 422 naming the bound for one above a bound, 400 otherwise.
func writeSimError(w http.ResponseWriter, err error) {
	var tl *sim.TooLargeError
	if errors.As(err, &tl) {
		writeDesignerProblem(w, designerProblem{problem: problem{Type: "about:blank",
			Title: "Unprocessable Content", Status: http.StatusUnprocessableEntity,
			Detail: "The simulation is larger than the designer runs: " + err.Error() + "."},
			Bound: tl.Bound, Max: tl.Max, Estimate: tl.Size})
		return
	}
	writeJSONProblem(w, http.StatusBadRequest, "Bad Request", err.Error())
}

func writeDesignerProblem(w http.ResponseWriter, p designerProblem) {
	body, _ := json.Marshal(p)
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)+1))
	w.WriteHeader(p.Status)
	w.Write(append(body, '\n'))
}

func (s *Server) handleDesigner(w http.ResponseWriter, r *http.Request) {
	writeAdminPage(w, designerPage())
}
