package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/sluice-dev/sluice/internal/redact"
)

// benchOptions is what "sluice bench" sends.
type benchOptions struct {
	url     string
	method  string
	body    string
	headers []string // "Name: value"
	conns   int
	// duration bounds the run; 0: none, only with requests.
	duration time.Duration
	// requests is how many requests the run sends at most (-n); 0: no
	// count, the run lasts duration.
	requests int
	rate     float64 // requests per second in all; 0: closed loop
	keys     int
	// tls verifies an https URL with a private CA and presents a client
	// certificate (-cacert, -cert, -key); nil: the system's roots, no
	// certificate.
	tls *tls.Config
}

// headerFlags collects repeated -H flags.
type headerFlags []string

func (h *headerFlags) String() string     { return strings.Join(*h, ", ") }
func (h *headerFlags) Set(v string) error { *h = append(*h, v); return nil }

const benchUsage = `usage: sluice bench [flags] URL

Sends requests to URL and reports requests/s, status codes and latency percentiles,
each within 0.4% of the exact one (the max exact), in a fixed amount of memory
however long the run.
A redirect is counted as its status, never followed. Requests that get no answer
(a connection refused or cut) are counted apart, not in the rate or latency, and
make the run exit 1; so do 5xx answers to more than 1 request in 10 (the server,
or what it proxies to, was failing rather than doing its work).
With -rate, latency counts from when the schedule said to send, so a slow server
cannot hide its queue (no coordinated omission).
-n N stops after N requests have been sent, once they are answered; alone it sets no
time limit (-d's default applies only without -n), and with -d the run ends at
whichever comes first (a run that -d ends short of N is a run as asked).

  sluice bench -body '{"subject":"{key}","path":"/api/search"}' http://localhost:9090/v1/check
  sluice bench -rate 500 -H 'Authorization: Bearer demo-free-key' http://localhost:8080/api/search

flags:
`

// runBench sends requests to a running server and reports throughput,
// status codes and latency: a quick measurement of one's own deployment
// (the side-by-side comparisons with other libraries are `make bench`).
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("bench", benchUsage, stderr)
	var o benchOptions
	var headers headerFlags
	fs.IntVar(&o.conns, "c", 64, "concurrent connections, one request in flight on each (at most 10000)")
	fs.DurationVar(&o.duration, "d", 10*time.Second, "how long to send; with -n, no limit unless given, and the run ends at whichever comes first")
	fs.IntVar(&o.requests, "n", 0, "stop after this many requests have been sent (at least 1; default: no count, -d alone ends the run)")
	fs.Float64Var(&o.rate, "rate", 0, "requests per second in all, on a fixed schedule (0: each connection sends as soon as its last answer came)")
	fs.StringVar(&o.method, "X", "", "method (default POST with -body, else GET)")
	fs.StringVar(&o.body, "body", "", "request body; {key} becomes one of -keys keys")
	fs.Var(&headers, "H", `request header "Name: value" (repeatable); {key} becomes one of -keys keys`)
	fs.IntVar(&o.keys, "keys", 10000, "distinct keys that {key} walks through (key-0, key-1, …)")
	var tlsFlags adminTLS
	fs.StringVar(&tlsFlags.caFile, "cacert", "", "https: a PEM bundle of the CAs that sign the server's certificate (default: the system's roots)")
	fs.StringVar(&tlsFlags.certFile, "cert", "", "https with mutual TLS: the client certificate to present")
	fs.StringVar(&tlsFlags.keyFile, "key", "", "https with mutual TLS: the client certificate's key")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := flagAfterArguments("bench", fs.Args()); err != nil {
		return err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if given["n"] && o.requests < 1 {
		return usageErrorf("-n %d: want at least 1 request", o.requests)
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return usageErrorf("want one URL")
	}
	o.url, o.headers = fs.Arg(0), headers
	if o.method == "" {
		o.method = http.MethodGet
		if o.body != "" {
			o.method = http.MethodPost
		}
	}
	if err := o.validate(); err != nil {
		return err
	}
	if given["n"] && !given["d"] {
		o.duration = 0
	}
	tc, err := tlsFlags.config()
	if err != nil {
		return err
	}
	o.tls = tc
	fmt.Fprintf(stdout, "sluice bench: %s %s for %s over %d connections, %s\n", o.method, redact.URL(o.url), o.span(), o.conns, o.mode())
	r := bench(ctx, &o)
	r.write(stdout)
	if r.interrupted {
		switch {
		case o.requests == 0:
			return fmt.Errorf("interrupted after %.2fs of the %v asked (-d): the figures above are of that part", r.elapsed.Seconds(), o.duration)
		case o.duration == 0:
			return fmt.Errorf("interrupted after %.2fs, %d sent of the %d requests asked (-n): the figures above are of that part", r.elapsed.Seconds(), r.sent, o.requests)
		default:
			return fmt.Errorf("interrupted after %.2fs, %d sent of the %d requests asked (-n) or %v (-d): the figures above are of that part", r.elapsed.Seconds(), r.sent, o.requests, o.duration)
		}
	}
	switch {
	case r.answered == 0 && r.errors == 0:
		return fmt.Errorf("no request was answered within the %v asked (-d): the server held them all, or the run is too short for one", o.duration)
	case r.answered == 0:
		return fmt.Errorf("every request failed; the first: %v", r.firstErr)
	case r.errors > 0:
		return fmt.Errorf("%d of %d requests got no answer (the first: %v): the figures above are of the %d answered", r.errors, r.errors+r.answered, r.firstErr, r.answered)
	}
	if n, codes := r.serverErrors(); n*maxServerErrorShare > r.answered {
		return fmt.Errorf("%d of %d answers were 5xx (%s): more than 1 in %d, the figures above are of a failing server", n, r.answered, codes, maxServerErrorShare)
	}
	return nil
}

// maxServerErrorShare is the bound on 5xx answers, one in this many
// answered, past which a run exits 1: the server (or what it proxies to)
// was failing rather than doing its work.
const maxServerErrorShare = 10

// serverErrors returns how many answers were 5xx and their counts by
// status, "500: 3, 503: 12".
func (r *benchResult) serverErrors() (int, string) {
	n := 0
	var parts []string
	for _, code := range r.codes() {
		if code/100 == 5 {
			n += r.statuses[code]
			parts = append(parts, fmt.Sprintf("%d: %d", code, r.statuses[code]))
		}
	}
	return n, strings.Join(parts, ", ")
}

// codes returns the statuses answered, in order.
func (r *benchResult) codes() []int {
	codes := make([]int, 0, len(r.statuses))
	for code := range r.statuses {
		codes = append(codes, code)
	}
	slices.Sort(codes)
	return codes
}

// maxBenchConns bounds -c: far above what one machine's load on one
// server needs, below what a typo's extra zeros would open.
const maxBenchConns = 10000

// validate returns a usageError naming the flag (or the URL) whose value
// bench cannot use.
func (o *benchOptions) validate() error {
	u, err := url.Parse(o.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usageErrorf("URL %q: want http://host[:port]/path or https://…", redact.URL(o.url))
	}
	switch {
	case o.conns < 1:
		return usageErrorf("-c %d: want at least 1 connection", o.conns)
	case o.conns > maxBenchConns:
		return usageErrorf("-c %d: at most %d connections", o.conns, maxBenchConns)
	case o.duration <= 0:
		return usageErrorf("-d %v: want a positive duration", o.duration)
	case o.rate < 0 || math.IsNaN(o.rate) || math.IsInf(o.rate, 0):
		return usageErrorf("-rate %v: want 0 (closed loop) or a positive rate", o.rate)
	case o.keys < 1:
		return usageErrorf("-keys %d: want at least 1", o.keys)
	}
	if !httpguts.ValidHeaderFieldName(o.method) { // a method is a token, as a header's name is
		return usageErrorf("-X %q: want a method such as GET, POST or PURGE (%s)", o.method, tokenChars)
	}
	for i, h := range o.headers {
		if err := validHeader(h); err != nil {
			return usageErrorf("-H, the %s: %w", ordinal(i+1), err)
		}
	}
	return nil
}

// tokenChars says which characters a method or a header's name, each an
// HTTP token, is made of.
const tokenChars = "letters, digits and !#$%&'*+-.^_`|~ only, no space"

// validHeader returns why h, a -H value, is no "Name: value" header a
// request can carry, or nil. The error holds neither the name nor the
// value: a header given wrong is often a credential.
func validHeader(h string) error {
	name, value, ok := strings.Cut(h, ":")
	name = strings.TrimSpace(name)
	switch {
	case !ok || name == "":
		return errors.New(`want "Name: value" (it has no name before a colon)`)
	case !httpguts.ValidHeaderFieldName(name):
		return fmt.Errorf(`want "Name: value" (its name holds a character no name takes; %s)`, tokenChars)
	case !httpguts.ValidHeaderFieldValue(strings.TrimSpace(value)):
		return errors.New("its value holds a control character (a newline, a NUL) no header value takes")
	}
	return nil
}

// ordinal writes n, from 1, as "1st", "2nd", "3rd", "4th", …
func ordinal(n int) string {
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return strconv.Itoa(n) + suffix
}

// span says what ends the run: "10s", "1000 requests", or "1000 requests
// or 10s, whichever ends first".
func (o *benchOptions) span() string {
	switch {
	case o.requests == 0:
		return o.duration.String()
	case o.duration == 0:
		return fmt.Sprintf("%d requests", o.requests)
	}
	return fmt.Sprintf("%d requests or %v, whichever ends first", o.requests, o.duration)
}

func (o *benchOptions) mode() string {
	if o.rate > 0 {
		return fmt.Sprintf("paced at %g/s", o.rate)
	}
	return "closed loop"
}

// benchResult is what the workers saw.
type benchResult struct {
	elapsed time.Duration
	// sent counts the requests sent, answered or not.
	sent int
	// answered counts the requests that got a response, whatever its
	// status; errors those that got none (a connection refused or cut),
	// whose first is firstErr. The rate and latency are of the answered.
	answered int
	errors   int
	firstErr error
	statuses map[int]int
	// latency is of the answered, shared by the workers of a run.
	latency *latencyHistogram
	behind  time.Duration // paced: the most a worker fell behind its schedule
	// interrupted is whether the run ended before o.duration and before
	// o.requests were sent and answered, its context done (a signal).
	interrupted bool
}

// errRunOver is the cause of the end of a run that lasted its duration.
var errRunOver = errors.New("the run's duration is over")

// bench runs o's workers until o.duration has passed, o.requests have
// been sent and answered, or ctx ends (the result is then interrupted).
func bench(ctx context.Context, o *benchOptions) *benchResult {
	var cancel context.CancelFunc
	if o.duration > 0 {
		ctx, cancel = context.WithTimeoutCause(ctx, o.duration, errRunOver)
	} else {
		ctx, cancel = context.WithCancel(ctx)
	}
	defer cancel()
	var (
		mu   sync.Mutex
		res  = &benchResult{statuses: map[int]int{}, latency: newLatencyHistogram()}
		wg   sync.WaitGroup
		sent atomic.Int64
	)
	start := time.Now()
	for w := range o.conns {
		wg.Go(func() {
			part := o.worker(ctx, w, start, &sent, res.latency)
			mu.Lock()
			defer mu.Unlock()
			res.sent += part.sent
			res.answered += part.answered
			res.errors += part.errors
			if res.firstErr == nil {
				res.firstErr = part.firstErr
			}
			for code, n := range part.statuses {
				res.statuses[code] += n
			}
			res.behind = max(res.behind, part.behind)
		})
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	res.interrupted = ctx.Err() != nil && !errors.Is(context.Cause(ctx), errRunOver)
	return res
}

// worker sends requests on its own connection: back to back, or at its
// share of the rate, worker w taking the schedule's slots w, w+c, w+2c, …,
// slot n due n/rate seconds after start; it sends none due after
// o.duration, however low the rate, and returns when ctx ends. With
// o.requests, the workers share sent, the count of requests sent: a worker
// returns once its next request would be past o.requests (paced: once its
// next slot is). It records the latency of each answered request in
// latency, and follows no redirect.
func (o *benchOptions) worker(ctx context.Context, w int, start time.Time, sent *atomic.Int64, latency *latencyHistogram) *benchResult {
	res := &benchResult{statuses: map[int]int{}}
	client := &http.Client{
		Transport: &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true, TLSClientConfig: o.tls},
		// A redirect is counted as the answer it is: following it would
		// send the load to another server, perhaps another's.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	defer client.CloseIdleConnections()
	key := w * 7919 // spread the workers over the keys
	for i := 0; ; i++ {
		due := time.Now()
		if o.rate > 0 {
			slot := w + i*o.conns
			if o.requests > 0 && slot >= o.requests { // no slot of w's is left in the count
				return res
			}
			at := float64(slot) / o.rate * float64(time.Second)
			end := float64(math.MaxInt64) // beyond time.Duration: never due
			if o.duration > 0 {
				end = float64(o.duration)
			}
			if at >= end { // no slot of w's is left in the run
				<-ctx.Done()
				return res
			}
			due = start.Add(time.Duration(at))
			if wait := time.Until(due); wait > 0 {
				select {
				case <-ctx.Done():
					return res
				case <-time.After(wait):
				}
			} else {
				res.behind = max(res.behind, -wait)
			}
		}
		if ctx.Err() != nil {
			return res
		}
		if n := sent.Add(1); o.requests > 0 && n > int64(o.requests) {
			return res
		}
		res.sent++
		k := "key-" + strconv.Itoa(key%o.keys)
		key++
		code, err := o.send(ctx, client, k)
		if ctx.Err() != nil && err != nil {
			return res // cut off by the end of the run: not a failure
		}
		if err != nil {
			res.errors++
			if res.firstErr == nil {
				res.firstErr = err
			}
			continue
		}
		res.answered++
		latency.Record(time.Since(due))
		res.statuses[code]++
	}
}

// send makes one request with key in place of {key} and reads the whole
// response.
func (o *benchOptions) send(ctx context.Context, client *http.Client, key string) (int, error) {
	var body io.Reader
	if o.body != "" {
		body = strings.NewReader(strings.ReplaceAll(o.body, "{key}", key))
	}
	req, err := http.NewRequestWithContext(ctx, o.method, o.url, body)
	if err != nil {
		return 0, err
	}
	for _, h := range o.headers {
		name, value, _ := strings.Cut(h, ":")
		name, value = strings.TrimSpace(name), strings.ReplaceAll(strings.TrimSpace(value), "{key}", key)
		if strings.EqualFold(name, "Host") { // net/http sends req.Host, never a Host header
			req.Host = value
			continue
		}
		req.Header.Add(name, value)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return 0, err
	}
	return resp.StatusCode, nil
}

func (r *benchResult) write(w io.Writer) {
	secs := r.elapsed.Seconds()
	fmt.Fprintf(w, "requests  %d in %.2fs: %.0f/s\n", r.answered, secs, float64(r.answered)/secs)
	var parts []string
	for _, code := range r.codes() {
		parts = append(parts, fmt.Sprintf("%d: %d", code, r.statuses[code]))
	}
	fmt.Fprintf(w, "statuses  %s\n", strings.Join(parts, "  "))
	if r.errors > 0 {
		fmt.Fprintf(w, "errors    %d (first: %v)\n", r.errors, r.firstErr)
	}
	if r.latency.Count() > 0 {
		fmt.Fprintf(w, "latency   p50 %s  p90 %s  p99 %s  max %s\n",
			ms(r.latency.Percentile(50)), ms(r.latency.Percentile(90)), ms(r.latency.Percentile(99)), ms(r.latency.Max()))
	}
	answered := 0
	for code, n := range r.statuses {
		if code/100 == 2 || code == http.StatusTooManyRequests {
			answered += n
		}
	}
	if len(r.statuses) > 0 && answered == 0 {
		fmt.Fprintln(w, "note      no request got a 2xx or a 429: check the URL, method, headers and body")
	}
	if r.behind > 10*time.Millisecond {
		fmt.Fprintf(w, "note      the senders fell up to %s behind the schedule: this machine, not only the server, limited the rate\n", ms(r.behind))
	}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3fms", float64(d)/float64(time.Millisecond)) }
