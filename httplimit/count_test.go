package httplimit_test

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// statusHandler answers with the status the request's path names:
// "/200", "/404", "/503"; "/panic" panics.
func statusHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/panic":
			panic(http.ErrAbortHandler)
		case "/404":
			w.WriteHeader(http.StatusNotFound)
		case "/503":
			http.Error(w, "down", http.StatusServiceUnavailable)
		case "/silent":
			// no write: net/http answers 200
		default:
			w.Write([]byte("ok"))
		}
	})
}

// serve runs r through h and returns the status the client got, a panic
// of the handler counting as no answer (0).
func serve(h http.Handler, path string) (code int) {
	defer func() {
		if recover() != nil {
			code = 0
		}
	}()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
	return w.Code
}

// counted returns a middleware whose plan has a fixed window "fails" of 3
// counting only failures, a sliding log "wins" of 3 counting only
// successes and a sliding counter "all" of 100 counting every request.
func counted(t *testing.T) *httplimit.Middleware {
	mw, _ := clockedMiddleware(t, httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{
			sluice.FixedWindow(3, time.Minute).Named("fails"),
			sluice.SlidingLog(3, time.Minute).Named("wins"),
			sluice.SlidingCounter(100, time.Minute).Named("all"),
		}}},
		Count: map[string]string{"fails": httplimit.CountFailures, "wins": httplimit.CountSuccesses},
	})
	return mw
}

// remaining peeks at what each limit of the plan has left for the test
// client, by name.
func remaining(t *testing.T, mw *httplimit.Middleware) map[string]int64 {
	t.Helper()
	res, err := mw.DecideFor(context.Background(), httplimit.Requester{IP: netip.MustParseAddr("192.0.2.1")}, "GET", "/", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer mw.Discard(res)
	out := map[string]int64{}
	for i, c := range res.Checks {
		out[c.Limit.Name()] = res.Decision.Statuses[i].Remaining
	}
	return out
}

// Counting only failures refunds successes exactly: any number of
// successful requests leave the limit full, and it refuses after its
// quota of failures. A limit counting only successes does the reverse.
func TestCountByResponse(t *testing.T) {
	mw := counted(t)
	h := mw.Handler(statusHandler())
	var codes []int
	for range 5 {
		codes = append(codes, serve(h, "/200"))
	}
	if want := []int{200, 200, 200, 429, 429}; !slices.Equal(codes, want) {
		t.Fatalf("five successes: %v, want %v: the fourth refused by wins", codes, want)
	}
	if got := remaining(t, mw); got["fails"] != 3 || got["all"] != 97 || got["wins"] != 0 {
		t.Fatalf("after 3 successes and 2 refusals: %v, want fails 3 (every success refunded), wins 0, all 97", got)
	}

	mw = counted(t)
	h = mw.Handler(statusHandler())
	codes = codes[:0]
	for range 4 {
		codes = append(codes, serve(h, "/404"))
	}
	if want := []int{404, 404, 404, 429}; !slices.Equal(codes, want) {
		t.Fatalf("four failures: %v, want %v: the fourth refused by fails", codes, want)
	}
	if got := remaining(t, mw); got["fails"] != 0 || got["wins"] != 3 || got["all"] != 97 {
		t.Fatalf("after 3 failures and a refusal: %v, want fails 0, wins 3 (nothing refunded for the refusal), all 97", got)
	}
}

// What counts as an answer: a 5xx is a failure; a handler that writes
// nothing answered 200; a handler that panics (http.ErrAbortHandler) is a
// failure, and its panic reaches net/http.
func TestCountByResponseOutcomes(t *testing.T) {
	for _, tc := range []struct {
		path      string
		code      int
		fails     int64 // what "fails" has left after the request
		wins      int64
		panicking bool
	}{
		{path: "/503", code: 503, fails: 2, wins: 3},
		{path: "/silent", code: 200, fails: 3, wins: 2},
		{path: "/panic", code: 0, fails: 2, wins: 3, panicking: true},
	} {
		t.Run(tc.path, func(t *testing.T) {
			mw := counted(t)
			h := mw.Handler(statusHandler())
			if code := serve(h, tc.path); code != tc.code {
				t.Fatalf("status %d, want %d", code, tc.code)
			}
			if got := remaining(t, mw); got["fails"] != tc.fails || got["wins"] != tc.wins {
				t.Errorf("left: %v, want fails %d, wins %d", got, tc.fails, tc.wins)
			}
		})
	}
}

// A status list counts only the answers it names: "status:404" counts a
// scanner's misses and refunds its hits and the upstream's errors; a class
// counts every status of it; no answer counts as a 500.
func TestCountByStatusList(t *testing.T) {
	for _, tc := range []struct {
		list  string
		paths []string
		left  int64 // of 10
	}{
		{"404", []string{"/200", "/404", "/503", "/404", "/silent"}, 8},
		{"4xx,503", []string{"/200", "/404", "/503", "/404"}, 7},
		{"5xx", []string{"/panic", "/503", "/200", "/404"}, 8},
		{"401, 403", []string{"/200", "/404", "/503"}, 10},
	} {
		t.Run(tc.list, func(t *testing.T) {
			mw, _ := clockedMiddleware(t, httplimit.Options{
				Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.SlidingLog(10, time.Minute).Named("misses")}}},
				Count: map[string]string{"misses": httplimit.CountStatus + tc.list},
			})
			h := mw.Handler(statusHandler())
			for _, p := range tc.paths {
				serve(h, p)
			}
			if got := remaining(t, mw)["misses"]; got != tc.left {
				t.Errorf("after %v: %d left, want %d", tc.paths, got, tc.left)
			}
		})
	}
}

// Only requests that a counted limit applies to reach their handler
// through a status recorder: the others get the server's ResponseWriter
// as it is, and a flush still reaches the client through the recorder.
func TestCountWrapsOnlyWhenCounted(t *testing.T) {
	mw, _ := clockedMiddleware(t, httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(10, time.Minute)}}},
		Rules: []httplimit.Rule{{Name: "writes", Methods: []string{"POST"}, Key: []string{httplimit.KeyClient},
			Limits: []sluice.Limit{sluice.FixedWindow(2, time.Minute).Named("per-minute")}}},
		Count: map[string]string{"writes": httplimit.CountFailures},
	})
	var wrapped []bool
	h := mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, bare := w.(*httptest.ResponseRecorder)
		wrapped = append(wrapped, !bare)
		if err := http.NewResponseController(w).Flush(); err != nil {
			t.Errorf("flush through the recorder: %v", err)
		}
	}))
	for _, method := range []string{"GET", "POST"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(method, "/", nil))
	}
	if want := []bool{false, true}; !slices.Equal(wrapped, want) {
		t.Errorf("wrapped: %v, want %v (GET matches no counted limit)", wrapped, want)
	}
}

// Callers of DecideFor report the answer with DoneWithStatus; Done counts
// the request whatever its answer.
func TestDoneWithStatus(t *testing.T) {
	mw := counted(t)
	ctx := context.Background()
	who := httplimit.Requester{IP: netip.MustParseAddr("192.0.2.1")}
	for _, status := range []int{200, 302, 0} {
		res, err := mw.DecideFor(ctx, who, "GET", "/", -1)
		if err != nil || !res.Decision.Allowed {
			t.Fatal(res, err)
		}
		if status == 0 {
			mw.Done(ctx, res)
		} else {
			mw.DoneWithStatus(ctx, res, status)
		}
	}
	if got := remaining(t, mw); got["fails"] != 2 || got["wins"] != 0 {
		t.Errorf("after 200, 302 and a Done: %v, want fails 2 (Done counts), wins 0", got)
	}
}

// Validate refuses a count that no limit can keep exactly, and says why,
// as well as unknown names and values.
func TestCountValidation(t *testing.T) {
	plan := &httplimit.Plan{Name: "free", Limits: []sluice.Limit{
		sluice.TokenBucket(10, time.Second).Named("burst"),
		sluice.FixedWindow(10, time.Minute).Named("per-minute"),
		sluice.Concurrency(2, time.Minute).Named("in-flight"),
		sluice.GCRA(10, time.Second).Named("tokens"),
		sluice.SlidingLog(10, time.Minute).Named("per-hour"),
		sluice.SlidingLog(10, time.Minute).Named("per-day"),
	}}
	err := httplimit.Options{Plans: []*httplimit.Plan{plan}, Count: map[string]string{
		"burst":      httplimit.CountFailures,
		"per-minute": "errors",
		"nothing":    httplimit.CountSuccesses,
		"in-flight":  httplimit.CountFailures,
		"tokens":     httplimit.CountHeader + "X-Usage",
		"per-hour":   httplimit.CountHeader + "X Usage",
		"per-day":    httplimit.CountStatus + "404,6xx",
		"per-week":   httplimit.CountStatus + "404",
	}}.Validate()
	var fields []string
	for _, e := range unjoin(err) {
		var fe *httplimit.FieldError
		if !errors.As(e, &fe) {
			t.Fatalf("%v is no FieldError", e)
		}
		fields = append(fields, fe.Error())
	}
	for _, want := range []string{
		`Options.Count["burst"]: burst cannot count only failures: a token-bucket cannot refund a request exactly: it keeps only how much it misses`,
		`Options.Count["in-flight"]: in-flight cannot count only failures: a concurrency limit counts requests in flight`,
		`Options.Count["nothing"]: "nothing" is neither a limit nor a rule`,
		`Options.Count["per-minute"]: "errors" is not a count (all, successes, failures, header:<Name> or status:<list>)`,
		`Options.Count["tokens"]: tokens cannot count what header X-Usage reports: a gcra cannot refund a request exactly`,
		`Options.Count["per-hour"]: "header:X Usage": "X Usage" is not a header name`,
		`Options.Count["per-day"]: "status:404,6xx": "6xx" is neither a status (100 to 599) nor a class (1xx to 5xx)`,
		`Options.Count["per-week"]: "per-week" is neither a limit nor a rule`,
	} {
		if !slices.ContainsFunc(fields, func(f string) bool { return strings.Contains(f, want) }) {
			t.Errorf("no error %q in:\n%s", want, strings.Join(fields, "\n"))
		}
	}
	if len(fields) != 8 {
		t.Errorf("%d errors, want 8:\n%s", len(fields), strings.Join(fields, "\n"))
	}
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	if err == nil {
		return nil
	}
	return []error{err}
}

// Counts names each limit that does not count every request, a rule's
// count given to its limits not named on their own; the map is the
// caller's.
func TestCountsNamesTheCountedLimits(t *testing.T) {
	mw, _ := clockedMiddleware(t, httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(10, time.Minute).Named("per-minute")}}},
		Rules: []httplimit.Rule{{Name: "completions", Key: []string{httplimit.KeyClient}, Limits: []sluice.Limit{
			sluice.FixedWindow(2, time.Minute).Named("per-minute"), sluice.FixedWindow(20, time.Hour).Named("per-hour")}}},
		Count: map[string]string{"completions": httplimit.CountHeader + "X-Usage", "completions.per-hour": httplimit.CountSuccesses,
			"per-minute": httplimit.CountAll},
	})
	got := mw.Counts()
	want := map[string]string{"completions.per-minute": httplimit.CountHeader + "X-Usage", "completions.per-hour": httplimit.CountSuccesses}
	if !maps.Equal(got, want) {
		t.Errorf("Counts() = %v, want %v", got, want)
	}
	got["completions.per-minute"] = httplimit.CountAll
	if mw.Counts()["completions.per-minute"] != httplimit.CountHeader+"X-Usage" {
		t.Error("changing the map Counts returned changed the middleware's")
	}
}

// A client that leaves a leaky-bucket queue before its turn gets no answer:
// as DoneWithStatus says of an abandoned call, that is a failure, so a limit
// counting only successes gives its charge back and one counting failures
// keeps it.
func TestALeftQueueCountsAsNoAnswer(t *testing.T) {
	mw, _ := clockedMiddleware(t, httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{
			sluice.LeakyBucket(1, time.Second).WithMaxWait(10 * time.Second).Named("queue"),
			sluice.FixedWindow(3, time.Minute).Named("fails"),
			sluice.SlidingLog(3, time.Minute).Named("wins"),
		}}},
		Count: map[string]string{"fails": httplimit.CountFailures, "wins": httplimit.CountSuccesses},
	})
	h := mw.Handler(statusHandler())
	if code := serve(h, "/200"); code != 200 {
		t.Fatalf("the first request: %d", code)
	}
	// The store's clock stands still: the next request waits a second in
	// the queue, which its client, gone already, does not.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/200", nil).WithContext(ctx))
	if w.Body.String() == "ok" {
		t.Fatal("a client that left the queue reached the handler")
	}
	if got := remaining(t, mw); got["wins"] != 2 || got["fails"] != 2 {
		t.Errorf("left: %v, want wins 2 (one success), fails 2 (one request with no answer)", got)
	}
}
