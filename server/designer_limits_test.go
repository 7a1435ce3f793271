package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/httplimit"
)

// designerSmall is a simulation of a few thousand decisions.
const designerSmall = `{"limit":"100/1m","pattern":{"name":"boundary-burst"},"algorithms":["fixed-window","gcra"]}`

// designerHeavy is the run that took half a minute of CPU each: 180,000
// requests against a sliding window log of 150,000 a minute, whose every
// decision sums up to 150,000 entries.
const designerHeavy = `{"limit":"150000/1m","pattern":{"name":"steady","duration":"1m","rate":3000}}`

// designerLong is within the default bounds (about 3,900,000 decisions of
// work) and takes about half a second: 180,000 requests, a log of up to
// 1,000 entries.
const designerLong = `{"limit":"1000/1m","pattern":{"name":"steady","duration":"10m","rate":300}}`

type designerAnswer struct {
	status     int
	retryAfter string
	problem    designerProblem
	took       time.Duration
}

func postDesigner(t *testing.T, url, body string) designerAnswer {
	t.Helper()
	start := time.Now()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Error(err)
		return designerAnswer{}
	}
	defer resp.Body.Close()
	a := designerAnswer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After")}
	b, _ := io.ReadAll(resp.Body)
	a.took = time.Since(start)
	if resp.StatusCode != http.StatusOK {
		if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
			t.Errorf("%d with Content-Type %q: %s", resp.StatusCode, ct, b)
		}
		if err := json.Unmarshal(b, &a.problem); err != nil {
			t.Errorf("%d: not a problem: %s", resp.StatusCode, b)
		}
	}
	return a
}

// holdRuns makes every run of d that holds a slot and a worker say so on
// started and wait until release is closed.
func holdRuns(d *designer) (started, release chan struct{}) {
	started, release = make(chan struct{}), make(chan struct{})
	d.running = func(context.Context) {
		started <- struct{}{}
		<-release
	}
	return started, release
}

func serveDesigner(t *testing.T, d *designer) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(d.handleRun))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestDesignerDefaultLimits(t *testing.T) {
	l := newDesigner(designerLimits{}).limits
	if l.concurrency != runtime.GOMAXPROCS(0) || l.workers != max(runtime.GOMAXPROCS(0)/2, 1) ||
		l.maxArrivals != 200_000 || l.maxWork != 10_000_000 || l.timeout != 10*time.Second {
		t.Errorf("defaults %+v", l)
	}
	if l := newDesigner(designerLimits{concurrency: 1, workers: 4}).limits; l.workers != 1 {
		t.Errorf("%d workers for 1 simulation at once", l.workers)
	}
}

// With its slots taken, the designer answers the excess at once with 503,
// Retry-After and a reduced-capacity problem; the runs holding the slots
// finish with 200.
func TestDesignerRefusesRunsAboveItsConcurrency(t *testing.T) {
	const slots = 2
	d := newDesigner(designerLimits{concurrency: slots, workers: slots})
	started, release := holdRuns(d)
	url := serveDesigner(t, d)
	answers := make(chan designerAnswer, 4*slots)
	var wg sync.WaitGroup
	for range 4 * slots {
		wg.Go(func() { answers <- postDesigner(t, url, designerSmall) })
	}
	for range slots {
		<-started
	}
	for range 3 * slots { // the excess, answered while the slots are held
		a := <-answers
		if a.status != http.StatusServiceUnavailable || a.retryAfter != "1" ||
			a.problem.Type != httplimit.ProblemReducedCapacity || a.problem.Status != 503 {
			t.Errorf("excess run: %+v, want 503 with Retry-After: 1 and a reduced-capacity problem", a)
		}
	}
	close(release)
	wg.Wait()
	close(answers)
	for a := range answers {
		if a.status != http.StatusOK {
			t.Errorf("a run holding a slot: %+v", a)
		}
	}
	// The slots are free again.
	d.running = nil
	if a := postDesigner(t, url, designerSmall); a.status != http.StatusOK {
		t.Errorf("after the runs: %+v", a)
	}
}

// An admitted run waits for a worker rather than being refused: with one
// worker busy, the second admitted run waits and succeeds, the third is
// refused.
func TestDesignerAdmittedRunsWaitForAWorker(t *testing.T) {
	d := newDesigner(designerLimits{concurrency: 2, workers: 1})
	started, release := make(chan struct{}, 2), make(chan struct{})
	d.running = func(context.Context) {
		started <- struct{}{}
		<-release
	}
	url := serveDesigner(t, d)
	answers := make(chan designerAnswer, 2)
	go func() { answers <- postDesigner(t, url, designerSmall) }()
	<-started // the worker is taken
	go func() { answers <- postDesigner(t, url, designerSmall) }()
	for len(d.slots) < 2 { // the second run is admitted and waits
		time.Sleep(time.Millisecond)
	}
	if a := postDesigner(t, url, designerSmall); a.status != http.StatusServiceUnavailable {
		t.Errorf("a third run: %+v, want 503", a)
	}
	close(release)
	for range 2 {
		if a := <-answers; a.status != http.StatusOK {
			t.Errorf("an admitted run: %+v", a)
		}
	}
}

// A run past its deadline is the server's load, not the request's fault:
// 503 with Retry-After, never a 4xx.
func TestDesignerRunPastItsDeadlineIs503(t *testing.T) {
	for name, hold := range map[string]bool{"held past it": true, "simulating": false} {
		t.Run(name, func(t *testing.T) {
			d := newDesigner(designerLimits{timeout: 50 * time.Millisecond})
			if hold {
				d.running = func(ctx context.Context) { <-ctx.Done() }
			}
			a := postDesigner(t, serveDesigner(t, d), designerLong)
			if a.status != http.StatusServiceUnavailable || a.retryAfter == "" || a.problem.Type != httplimit.ProblemReducedCapacity {
				t.Fatalf("%+v, want 503 with Retry-After", a)
			}
			if a.took > 5*time.Second {
				t.Errorf("answered after %v with a 50ms deadline", a.took)
			}
		})
	}
}

// A simulation above a bound is refused with 422 naming the bound, before
// it runs: the heavy run at once instead of after half a minute; and, from
// its parameters alone, without a slot even when none is free.
func TestDesignerRefusesOversizeRunsBeforeRunning(t *testing.T) {
	d := newDesigner(designerLimits{concurrency: 1})
	url := serveDesigner(t, d)
	a := postDesigner(t, url, designerHeavy)
	if a.status != http.StatusUnprocessableEntity || a.problem.Bound != "work" || a.problem.Max != 10_000_000 ||
		a.problem.Estimate <= a.problem.Max || !strings.Contains(a.problem.Detail, "10000000") {
		t.Fatalf("%+v, want 422 naming the work bound", a)
	}
	if a.took > 2*time.Second {
		t.Errorf("refused after %v", a.took)
	}

	started, release := holdRuns(d)
	done := make(chan designerAnswer)
	go func() { done <- postDesigner(t, url, designerSmall) }()
	<-started // the only slot is taken
	a = postDesigner(t, url, `{"limit":"100/1m","pattern":{"name":"steady","keys":1000,"rate":1000,"duration":"1h"}}`)
	if a.status != http.StatusUnprocessableEntity || a.problem.Bound != "requests" || a.problem.Max != 200_000 ||
		a.problem.Estimate != 3_600_000_000 || !strings.Contains(a.problem.Detail, "200000") {
		t.Errorf("%+v, want 422 naming the requests bound", a)
	}
	if a := postDesigner(t, url, designerHeavy); a.status != http.StatusUnprocessableEntity || a.problem.Bound != "work" {
		t.Errorf("the heavy run with no slot free: %+v, want 422 on work", a)
	}
	close(release)
	if a := <-done; a.status != http.StatusOK {
		t.Errorf("the run holding the slot: %+v", a)
	}
}

// Imports have slots of their own: one is translated while every
// simulation slot is held, and the excess over the import slots is
// answered at once with 503 and Retry-After.
func TestDesignerImportsDoNotWaitForSimulations(t *testing.T) {
	const slots = 2
	d := newDesigner(designerLimits{concurrency: slots, workers: slots})
	started, release := holdRuns(d)
	sims := serveDesigner(t, d)
	imp := httptest.NewServer(http.HandlerFunc(d.handleImport))
	t.Cleanup(imp.Close)
	var wg sync.WaitGroup
	for range slots {
		wg.Go(func() { postDesigner(t, sims, designerSmall) })
	}
	for range slots {
		<-started
	}
	const nginx = `{"format":"nginx","source":"limit_req_zone $binary_remote_addr zone=a:1m rate=1r/s; limit_req zone=a;"}`
	if a := postDesigner(t, imp.URL, nginx); a.status != http.StatusOK {
		t.Errorf("an import while every simulation slot is held: %+v", a)
	}
	for range slots {
		d.imports <- struct{}{}
	}
	if a := postDesigner(t, imp.URL, nginx); a.status != http.StatusServiceUnavailable || a.retryAfter != "1" ||
		a.problem.Type != httplimit.ProblemReducedCapacity {
		t.Errorf("an import with every import slot held: %+v, want 503 with Retry-After: 1", a)
	}
	for range slots {
		<-d.imports
	}
	close(release)
	wg.Wait()
}

// A stranger's run of few requests costs few requests, whatever else it
// asks: ten million keys (a state each, 3.4 GB) or a spike of factor 1e9
// lasting a microsecond (1e11 draws, past any deadline) are answered within
// the timeout, their chart and figures of a hundred-odd requests. (Each
// takes a tenth of a second here, but up to 5 s with -race beside every
// package's tests; the spike drawing its 1e11 held its slot for minutes.)
func TestDesignerRunsOfFewRequestsStayCheap(t *testing.T) {
	const timeout = 20 * time.Second
	d := newDesigner(designerLimits{concurrency: 1, timeout: timeout})
	url := serveDesigner(t, d)
	for _, body := range []string{
		`{"limit":"10/1s","pattern":{"name":"steady","keys":10000000,"rate":1e-6,"duration":"10s"}}`,
		`{"limit":"10/1s","pattern":{"name":"spike","rate":1,"spike_factor":1e9,"spike_length":"1us","duration":"100s"}}`,
	} {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		before := ms.TotalAlloc
		if a := postDesigner(t, url, body); a.status != http.StatusOK || a.took > timeout {
			t.Errorf("%s: %d after %v: %+v", body, a.status, a.took, a.problem)
		}
		runtime.ReadMemStats(&ms)
		if alloc := ms.TotalAlloc - before; alloc > 200<<20 {
			t.Errorf("%s: allocated %d MB", body, alloc>>20)
		}
	}
}
