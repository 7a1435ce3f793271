package httplimit_test

import (
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// headerDemo is one limit served by a Middleware on a clock that only
// moves when told to, starting at noon UTC (a minute's and a second's
// start).
type headerDemo struct {
	h     http.Handler
	clock *fakeClock
}

func newHeaderDemo(l sluice.Limit, modes ...string) *headerDemo {
	clock := clockAt(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	mw, err := httplimit.New(sluice.NewLimiter(memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))),
		httplimit.Options{
			Plans:   []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{l}}},
			Headers: modes,
			Clock:   clock.Now,
		})
	if err != nil {
		log.Fatal(err)
	}
	return &headerDemo{h: mw.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})), clock: clock}
}

// send makes n requests and returns the last answer.
func (d *headerDemo) send(n int) *httptest.ResponseRecorder {
	var w *httptest.ResponseRecorder
	for range n {
		w = httptest.NewRecorder()
		d.h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	}
	return w
}

// show prints the answer's status and the named headers that it has.
func show(w *httptest.ResponseRecorder, names ...string) {
	if len(names) == 0 {
		names = []string{"RateLimit-Policy", "RateLimit", "Retry-After"}
	}
	var parts []string
	for _, n := range names {
		if v := w.Header().Get(n); v != "" {
			parts = append(parts, n+": "+v)
		}
	}
	fmt.Println(w.Code, strings.Join(parts, " | "))
}

// The worked examples of docs/headers.md: what each algorithm's headers
// say after the same kind of use. q is what the policy allocates (a
// bucket's burst), r what remains of it, t the seconds until more is
// available, never past w, and never past the Retry-After of a refusal.
func Example_headersPerAlgorithm() {
	fmt.Println("fixed window, 100 a minute: 58 requests at 12:00:42")
	d := newHeaderDemo(sluice.FixedWindow(100, time.Minute).Named("per-minute"))
	d.clock.Advance(42 * time.Second)
	show(d.send(58))

	fmt.Println("sliding log, 10 a minute: 4 requests at 12:00:10, 6 at 12:00:40, one at 12:00:50")
	d = newHeaderDemo(sluice.SlidingLog(10, time.Minute).Named("per-minute"))
	d.clock.Advance(10 * time.Second)
	d.send(4)
	d.clock.Advance(30 * time.Second)
	show(d.send(6))
	d.clock.Advance(10 * time.Second)
	show(d.send(1))

	fmt.Println("sliding counter, 100 a minute: 60 requests at 12:00:30, 10 at 12:01:15")
	d = newHeaderDemo(sluice.SlidingCounter(100, time.Minute).Named("per-minute"))
	d.clock.Advance(30 * time.Second)
	d.send(60)
	d.clock.Advance(45 * time.Second)
	show(d.send(10))

	fmt.Println("token bucket, 5 a second, burst 10: 1 request, then 9, then one more")
	d = newHeaderDemo(sluice.TokenBucket(5, time.Second).WithBurst(10).Named("per-second"))
	show(d.send(1))
	show(d.send(9))
	show(d.send(1))
	d.clock.Advance(time.Second)
	show(d.send(1))

	fmt.Println("GCRA, 2 a minute: 3 requests")
	d = newHeaderDemo(sluice.PerMinute(2).Named("per-minute"))
	show(d.send(1))
	show(d.send(1))
	show(d.send(1))

	fmt.Println("leaky bucket queue, 10 a second, burst 1, max wait 1s: 2 requests")
	d = newHeaderDemo(sluice.LeakyBucket(10, time.Second).WithBurst(1).WithMaxWait(time.Second).Named("queue"))
	show(d.send(1))
	show(d.send(1)) // admitted after a 100 ms wait in the queue

	fmt.Println("concurrency, 2 at once: 1 request (its slot is back when it ends)")
	d = newHeaderDemo(sluice.Concurrency(2, time.Minute).Named("in-flight"))
	show(d.send(1))

	// Output:
	// fixed window, 100 a minute: 58 requests at 12:00:42
	// 200 RateLimit-Policy: "per-minute";q=100;w=60 | RateLimit: "per-minute";r=42;t=18
	// sliding log, 10 a minute: 4 requests at 12:00:10, 6 at 12:00:40, one at 12:00:50
	// 200 RateLimit-Policy: "per-minute";q=10;w=60 | RateLimit: "per-minute";r=0;t=60
	// 429 RateLimit-Policy: "per-minute";q=10;w=60 | RateLimit: "per-minute";r=0;t=20 | Retry-After: 20
	// sliding counter, 100 a minute: 60 requests at 12:00:30, 10 at 12:01:15
	// 200 RateLimit-Policy: "per-minute";q=100;w=60 | RateLimit: "per-minute";r=45;t=60
	// token bucket, 5 a second, burst 10: 1 request, then 9, then one more
	// 200 RateLimit-Policy: "per-second";q=10;w=2 | RateLimit: "per-second";r=9;t=1
	// 200 RateLimit-Policy: "per-second";q=10;w=2 | RateLimit: "per-second";r=0;t=1
	// 429 RateLimit-Policy: "per-second";q=10;w=2 | RateLimit: "per-second";r=0;t=1 | Retry-After: 1
	// 200 RateLimit-Policy: "per-second";q=10;w=2 | RateLimit: "per-second";r=4;t=1
	// GCRA, 2 a minute: 3 requests
	// 200 RateLimit-Policy: "per-minute";q=2;w=60 | RateLimit: "per-minute";r=1;t=30
	// 200 RateLimit-Policy: "per-minute";q=2;w=60 | RateLimit: "per-minute";r=0;t=30
	// 429 RateLimit-Policy: "per-minute";q=2;w=60 | RateLimit: "per-minute";r=0;t=30 | Retry-After: 30
	// leaky bucket queue, 10 a second, burst 1, max wait 1s: 2 requests
	// 200 RateLimit-Policy: "queue";q=1;w=2 | RateLimit: "queue";r=0;t=1
	// 200 RateLimit-Policy: "queue";q=1;w=2 | RateLimit: "queue";r=0;t=1
	// concurrency, 2 at once: 1 request (its slot is back when it ends)
	// 200 RateLimit-Policy: "in-flight";q=2;qu="concurrent-requests" | RateLimit: "in-flight";r=1
}

// One answer in each header mode: a token bucket of 5 a second with a
// burst of 10, after 10 requests in the same instant.
func Example_headerModes() {
	for _, mode := range []string{httplimit.ModeIETF, httplimit.ModeDraft7, httplimit.ModeDraft6, httplimit.ModeLegacy} {
		d := newHeaderDemo(sluice.TokenBucket(5, time.Second).WithBurst(10).Named("per-second"), mode)
		fmt.Println(mode)
		show(d.send(10), "RateLimit-Policy", "RateLimit", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset",
			"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset")
	}
	// Output:
	// ietf
	// 200 RateLimit-Policy: "per-second";q=10;w=2 | RateLimit: "per-second";r=0;t=1
	// draft-7
	// 200 RateLimit-Policy: 10;w=2 | RateLimit: limit=10, remaining=0, reset=1
	// draft-6
	// 200 RateLimit-Policy: 10;w=2 | RateLimit-Limit: 10 | RateLimit-Remaining: 0 | RateLimit-Reset: 1
	// legacy
	// 200 X-RateLimit-Limit: 10 | X-RateLimit-Remaining: 0 | X-RateLimit-Reset: 1796040001
}
