package client

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"golang.org/x/net/idna"

	"github.com/sluice-dev/sluice"
)

// maxHosts bounds the hosts whose quota a Transport remembers: beyond it,
// the least recently used idle ones (no request under way, nothing learned
// that holds them: a Retry-After, a quota spent until its reset, a
// policy's window) are forgotten, and start over with a probe; when too
// few are idle, the least recently used of those that hold are forgotten
// too (their hold with them), so that hosts that each ask for a long wait
// cannot make a Transport remember them all. Only hosts with requests
// under way are never forgotten: a request is under way until its
// response's body is read to its end or closed (an upgraded connection
// closed), after RoundTrip has returned too.
const maxHosts = 1024

// maxDrain is the most of a throttled response's body read before a retry,
// so that its connection can be reused.
const maxDrain = 64 << 10

// drainGrace is the longest a retry is put off, past the server's wait, for
// the throttled response's body to end (no longer than what the wait
// leaves of Retry.MaxWait): a body that takes longer is closed unread.
const drainGrace = 100 * time.Millisecond

// Transport is an http.RoundTripper that keeps a client within its rate
// limits: for batch jobs, crawlers, and service-to-service calls.
//
// Before sending, it waits for the Gate when one is set: a limit of the
// client's own, local (NewLocalGate) or shared (a LimiterGate on a Redis
// store, a sluice server's APIGate). A Gate counts a request when it lets
// it go, a server when it arrives, later by a delay that varies: a
// LimiterGate over window limits (sluice.FixedWindow, SlidingLog,
// SlidingCounter) counts each of this process's units until w after its
// answer too, so that a server enforcing the same windows on this
// process's requests alone never has to refuse them; over other limits (a
// token bucket, GCRA, a leaky bucket) arrivals may bunch by as much as
// the limit's rate times the spread of the delays, and a gate shared by
// several processes counts the others' units when they are sent: keep
// such a gate below the server's limit by that much. A LeaseGate (a
// LimiterGate over concurrency limits) is held from the attempt until its
// response's body is closed, or until the attempt fails.
//
// It also learns from every response. The RateLimit headers (ietf draft-11,
// draft 7, draft 6 and X-RateLimit-*) say how much quota remains (but for
// a response a cache served, with an Age above 0, whose headers say what
// remained when it was stored: they are ignored); the
// Transport counts what it has in flight against that and holds new
// requests to a host once they might not fit, until the quota's reset, so
// that a batch sent through it meets few 429s or none, without knowing the
// limit in advance. A concurrency quota (RateLimit-Policy's
// qu="concurrent-requests") counts requests in flight: it has a slot back
// when a response's body is read to its end (or closed, when it has
// nothing to read or is a refusal's), or, for a 101
// Switching Protocols answer, when its body (the upgraded connection) is
// first closed, not when a read ends: the server serves it until then,
// however long, and no reset makes a probe go for its slot (a concurrency
// policy binds by its slots, not by its reset nor a rate: another policy
// of the answer, when it states one, is the binding one). Close every
// body, an upgraded connection included (net/http does not close one when
// the request's context ends): one never closed nor read to its end holds
// its slot for good, as far as the Transport knows; only the slot of an
// attempt that failed, which never ends, or of a body closed before its
// end, whose request the server may serve still, is learned anew by a
// probe after the quota's reset. A 429 for a concurrency quota may count
// another client's requests: after its wait, one probe goes even while
// the host's own requests hold their slots, unless they hold every slot
// the quota states. A quota of content
// bytes (qu="content-bytes") counts each request's body, its
// ContentLength: a body of unknown length counts as the whole quota (it
// waits until the quota is whole, a reset at most), and one larger than
// the whole quota fails at once with an error wrapping ErrExceedsBurst,
// since no wait can admit it. A policy in a unit not registered by the
// draft is ignored. A request goes only when every policy stated can take
// it: a probe after one policy's reset waits for the others with too
// little left, and a policy a later answer omits still counts what is
// sent. A policy's reset makes more of it available, not necessarily all
// (a sliding window refills gradually): after it one request may go
// alone, and then the policy's q and w, when stated, hold the host; when
// its w is not (RateLimit without RateLimit-Policy, the draft 7, draft 6
// and legacy formats), requests go one at a time until an answer reports
// it again. The formats that name no policy report one per answer: their
// policies are told apart by their limit, and one whose reset has passed
// is forgotten once more units than its limit have been admitted since
// with answers that report another limit and not it (a server that
// changed the limit). A policy stated in
// RateLimit-Policy, q units per w seconds, keeps the host to at most q
// units in any span of w when no answer says what remains of it (or, past
// that answer's reset, when the answers omit it again), a unit counting
// from its send until w after its answer (counted in slots of w/64), the
// units answered less than w before it was first stated included; once an
// answer has proven that the policy's count is released whole at its
// reset (no sliding log), only the units answered after the report of
// that reset count past it.
// Requests
// held wait their turn in the order they came: one that arrives while
// others wait for room lines up behind them. Holds
// are per host and shared by every request of the Transport: a host is URL.Host in any case, in Unicode or in its xn--
// ASCII form, an IP address however it is written, a port with or without
// leading zeros, with or without the root's dot of a fully qualified name,
// its scheme's default port (80 for http, 443 for https) written or not,
// so that "https://API.example.com", "https://api.example.com.:443" and
// "http://api.example.com" share one quota (a server's quota is its
// client's, whichever scheme it comes by); another port is another host,
// and so is another name of the same server. A host waits for answers a
// minute at most: when requests to it are in flight and none has been
// answered or failed for a minute (a probe whose server never answers,
// sent without a deadline), they count as failed attempts, and the next
// request probes.
//
// When a response is 429 or 503, it honours Retry-After (delay-seconds or
// an HTTP-date) and the RateLimit reset (no wait a server asks for holds
// a host more than an hour: a longer one ends with a probe after the
// hour), and retries as Retry says (by
// default: idempotent requests, at most 3 times, within a retry budget),
// after the longer of the server's wait (the backoff when it gives none)
// and the host's learned hold on the retry.
// A request is retried only if its body can be sent again (GetBody).
//
// Every wait ends at once when the request's context is done; a wait whose
// end is known to lie beyond the context's deadline or Retry.MaxWait is not
// begun (RoundTrip returns an error wrapping ErrWaitTooLong, or the
// throttled response itself when it was a retry's wait), and one whose end
// is not known (for a concurrency quota's slot) fails with ErrWaitTooLong
// once it has lasted Retry.MaxWait. Every wait of one request counts
// toward Retry.MaxWait: the holds, the Gate's and a slot's before each
// attempt, and the waits before its retries. A Gate's round trip to its
// store or decision API is no wait: a Gate's call counts the spans the
// Gates of this package report they block for (no more than the call
// lasted: they may overlap), or what the call lasts beyond 20ms,
// whichever is longer (so a Gate of another package that paces on its own
// counts even when it then asks one of this package's). A Gate is given
// 20ms to admit beyond what is left of Retry.MaxWait, however little is
// left, so that the retry a wait was accepted for is made through a Gate
// that can admit at once, and a Gate that asks again after a wait it
// accepted has its round trip; the waits of this package's Gates are
// bounded by what is left, unpadded: one whose end they know (a
// refusal's, a queue's Delay) is not begun past it, and one whose end
// they do not know (in line, for a slot) fails with ErrWaitTooLong there.
//
// The zero Transport is usable: http.DefaultTransport, no Gate, cost 1 per
// request, learning on, the default RetryPolicy. Set its fields before the
// first request and do not change them afterwards. A Transport is safe for
// concurrent use, and should be shared: what it learns is per Transport.
type Transport struct {
	// Base sends the requests; http.DefaultTransport when nil.
	Base http.RoundTripper
	// Gate, when set, is waited for before every attempt, retries included.
	Gate Gate
	// FailOpen sends the request anyway when the Gate cannot decide (its
	// error wraps sluice.ErrStoreUnavailable): the server's own limit and
	// the learned holds still apply. By default RoundTrip returns the error.
	FailOpen bool
	// Cost returns the units a request spends, at the Gate and in the
	// server's quota (so that the learned bounds count right, make it
	// match the server's costs); nil means 1 for every request. Negative
	// costs count as 0; in the learned bounds, costs above
	// sluice.MaxQuantity count as it.
	Cost func(*http.Request) int64
	// Retry says which throttled requests are retried and how.
	Retry RetryPolicy
	// IgnoreRemaining turns learning off: requests are held only by
	// Retry-After after a 429 or 503, never because the headers say the
	// quota is spent.
	IgnoreRemaining bool
	// Partition, when set, names the partition of the server's quotas
	// that a request spends: the draft's partition key (pk), such as the
	// user, API key or resource a server allocates its quotas per. What
	// the Transport learns, and every hold, is then per host and
	// partition, as the server keeps the quotas apart. The name is the
	// Transport's own, never compared with the pk of an answer. nil, or
	// "", is the host's one partition: the Transport reads no pk, and
	// the answers of requests in several partitions teach one quota, so
	// that a request may be sent on the strength of another partition's
	// answer (and meet a 429) and a Retry-After of one holds them all.
	// A 503's Retry-After (a server short of capacity, shedding load)
	// holds every partition of its host, as it does without Partition;
	// a 429's holds its partition alone.
	// Partition by endpoint when a server limits some endpoints and not
	// others (an answer without rate-limit fields says that no quota
	// binds its partition), or states different policies for them (every
	// policy stated holds the partition's requests: until its reset, and
	// then by its window while answers omit it).
	Partition func(*http.Request) string

	// stallAfter replaces stallAfter in tests; zero: stallAfter.
	stallAfter time.Duration

	once    sync.Once
	policy  RetryPolicy
	retries *Retries
	mu      sync.Mutex
	hosts   map[string]*hostState
	// sweepAt is the number of hosts at which idle ones are forgotten:
	// maxHosts, or twice the hosts that were busy at the last sweep, so
	// that sweeps stay rare however many hosts are busy at once.
	sweepAt int
	// overloads holds, per host (hostKey), until when a 503's Retry-After
	// holds every partition of it (see holdServer); guarded by mu.
	overloads map[string]time.Time
	stats     struct {
		requests, attempts, retries, throttled, unbudgeted, held atomic.Int64
		waited                                                   atomic.Int64 // ns
	}
}

// Stats counts what a Transport has done since it was made.
type Stats struct {
	// Requests is the number of RoundTrip calls.
	Requests int64
	// Attempts is the number of requests passed to Base, retries included.
	Attempts int64
	// Retries is the number of attempts that were retries.
	Retries int64
	// Throttled is the number of 429 and 503 responses received.
	Throttled int64
	// Unbudgeted is the number of retries the retry budget refused.
	Unbudgeted int64
	// Held is the number of attempts that waited for a learned hold (a
	// spent quota or a Retry-After), and Waited the total time the
	// Transport spent waiting: at the Gate, on holds, and before retries.
	Held   int64
	Waited time.Duration
}

// Stats returns the Transport's counts.
func (t *Transport) Stats() Stats {
	return Stats{
		Requests:   t.stats.requests.Load(),
		Attempts:   t.stats.attempts.Load(),
		Retries:    t.stats.retries.Load(),
		Throttled:  t.stats.throttled.Load(),
		Unbudgeted: t.stats.unbudgeted.Load(),
		Held:       t.stats.held.Load(),
		Waited:     time.Duration(t.stats.waited.Load()),
	}
}

func (t *Transport) setup() {
	t.retries = NewRetries(t.Retry)
	t.policy = t.retries.Policy()
	t.hosts = map[string]*hostState{}
}

func (t *Transport) base() http.RoundTripper {
	if t.Base != nil {
		return t.Base
	}
	return http.DefaultTransport
}

// CloseIdleConnections closes the idle connections of Base, if it has a
// CloseIdleConnections method (http.Client.CloseIdleConnections calls this).
func (t *Transport) CloseIdleConnections() {
	if c, ok := t.base().(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// host returns the learned state of a host, or of a partition of server
// (its hostKey), forgetting idle hosts when there are too many; one made
// while server sheds load is held as its other partitions are (see
// holdServer). The caller holds it until it calls t.unhold(h): meanwhile
// it is not forgotten.
func (t *Transport) host(server, name string) *hostState {
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.hosts[name]
	if h == nil {
		if len(t.hosts) >= max(t.sweepAt, maxHosts) {
			t.forgetIdle()
		}
		h = newHostStateCountingBytes(!t.IgnoreRemaining, t.stallAfter)
		h.holdUntil = t.overloads[server]
		t.hosts[name] = h
	}
	h.holders++
	return h
}

// hostKey returns the name a Transport keeps u's host under: URL.Host in
// lower case and in ASCII (an internationalized name as the xn-- labels
// it is dialed by; an IP address as netip writes it, an IPv4-mapped one
// as its IPv4 address; an IPv6 zone kept as written), without the root's dot
// that ends a fully qualified name, its port without leading zeros and
// left out when it is the scheme's default (80 for http, 443 for https),
// so that "API.example.com", "api.example.com." and, for https,
// "api.example.com:443" and "api.example.com:0443" are one host, as are
// "http://api.example.com" and "https://api.example.com". IPv6 literals
// keep their brackets ("[2001:db8::1]", "[2001:db8::1]:8443").
func hostKey(u *url.URL) string {
	host, port := u.Hostname(), u.Port()
	zone := ""
	if i := strings.IndexByte(host, '%'); i >= 0 {
		host, zone = host[:i], host[i:]
	}
	if len(host) > 1 && strings.HasSuffix(host, ".") {
		host = host[:len(host)-1]
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		host = ip.Unmap().String() // one way to write it: 2001:db8::1
	} else {
		host = asciiHost(host)
	}
	host += zone
	if trimmed := strings.TrimLeft(port, "0"); trimmed != port {
		port = cmp.Or(trimmed, "0") // as it is dialed: 0080 is 80
	}
	if port == "80" && u.Scheme == "http" || port == "443" && u.Scheme == "https" {
		port = ""
	}
	if port != "" {
		return net.JoinHostPort(host, port)
	}
	if strings.Contains(host, ":") {
		return "[" + host + "]"
	}
	return host
}

// quotaKey is the name the Transport keeps what it learns of req's quota
// under: its host's, server (hostKey), and the partition Partition names.
func (t *Transport) quotaKey(server string, req *http.Request) string {
	key := server
	if t.Partition != nil {
		if p := t.Partition(req); p != "" {
			key += " " + p // no host key holds a space
		}
	}
	return key
}

// asciiHost returns host in lower case, and a host not in ASCII as the
// ASCII name it is dialed by (IDNA: "Bücher.example" is
// "xn--bcher-kva.example"), or in lower case as it is when it has none.
func asciiHost(host string) string {
	for i := 0; i < len(host); i++ {
		if host[i] >= utf8.RuneSelf {
			if ascii, err := idna.Lookup.ToASCII(host); err == nil {
				return strings.ToLower(ascii)
			}
			break
		}
	}
	return strings.ToLower(host)
}

// unhold ends a hold that host gave.
func (t *Transport) unhold(h *hostState) {
	t.mu.Lock()
	h.holders--
	t.mu.Unlock()
}

// forgetIdle forgets the least recently used idle hosts (none of
// whose requests is under way, holding nothing they learned: see
// hostState.holds), then, if too many remain, the least recently used of
// those that hold, until at most half of maxHosts remain or only hosts
// with requests under way do (in RoundTrip, or whose response's body is
// still open: see hostState.underWay); t.mu is held.
func (t *Transport) forgetIdle() {
	type idleHost struct {
		name string
		held bool
		used time.Time
	}
	now := time.Now()
	var idle []idleHost
	for k, h := range t.hosts {
		if h.holders > 0 {
			continue
		}
		h.mu.Lock()
		if !h.underWay() {
			idle = append(idle, idleHost{k, h.holds(now), h.lastUsed})
		}
		h.mu.Unlock()
	}
	slices.SortFunc(idle, func(a, b idleHost) int {
		switch {
		case a.held != b.held && !a.held:
			return -1
		case a.held != b.held:
			return 1
		}
		return a.used.Compare(b.used)
	})
	for _, e := range idle {
		if len(t.hosts) <= maxHosts/2 {
			break
		}
		delete(t.hosts, e.name)
	}
	t.sweepAt = 2 * len(t.hosts)
}

// RoundTrip implements http.RoundTripper: it sends req through Base within
// the Gate and the learned limits, and retries it as Retry says. It returns
// the last response, which may be a 429 or 503 when retrying was not
// allowed or did not help, or an error: Base's, the Gate's, the context's,
// or one wrapping ErrWaitTooLong.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.once.Do(t.setup)
	ctx := req.Context()
	cost := int64(1)
	if t.Cost != nil {
		cost = max(t.Cost(req), 0)
	}
	server := hostKey(req.URL)
	h := t.host(server, t.quotaKey(server, req))
	defer t.unhold(h)
	t.stats.requests.Add(1)
	t.retries.Call()
	retryable := (t.policy.RetryNonIdempotent || idempotent(req)) && rewindable(req)

	send := req
	// left is what is left of Retry.MaxWait for the request's next wait:
	// every wait of the request counts, the holds, the Gate's and a slot's
	// before each attempt and the sleeps before retries (no bound stays
	// none).
	left := t.policy.MaxWait
	spend := func(d time.Duration) {
		if t.policy.MaxWait < maxHint {
			left -= d
		}
	}
	for retry := 0; ; retry++ {
		if retry > 0 {
			var err error
			if send, err = rewind(req); err != nil {
				return nil, fmt.Errorf("client: rewinding the body for a retry: %w", err)
			}
		}
		tk, release, waited, err := t.admit(send, h, cost, left)
		spend(waited)
		if err != nil {
			closeBody(send)
			return nil, err
		}
		if release != nil {
			release = sync.OnceFunc(release) // by the body's Close, or before a retry's wait
		}
		t.stats.attempts.Add(1)
		resp, err := t.base().RoundTrip(send)
		// Whether the answer's body has nothing to read is decided on the
		// body Base returned, before a Gate's release wraps it.
		empty := err == nil && emptyBody(send, resp)
		if release != nil {
			if err != nil {
				release()
			} else {
				resp.Body = releasing(resp.Body, release)
			}
		}
		r := response{at: time.Now()}
		if err == nil {
			r = readResponse(resp.Header, r.at)
			r.status = resp.StatusCode
		}
		if throttled(r.status) {
			// A refusal that gives no wait holds the host for the backoff
			// its retry waits, as the server said nothing longer.
			r.backoff, r.hasBackoff = backoff(t.policy.BackoffBase, t.policy.BackoffCap, retry), true
		}
		h.finish(tk, r)
		if err != nil {
			return nil, err
		}
		if r.status == http.StatusServiceUnavailable && r.hasRA && t.Partition != nil {
			t.holdServer(server, r.at.Add(min(r.ra, maxServerWait)))
		}
		switch {
		case t.IgnoreRemaining:
		case resp.StatusCode == http.StatusSwitchingProtocols:
			// The body is the upgraded connection: its request is in
			// flight at the server, which serves it, until it is closed.
			resp.Body = releasing(resp.Body, func() { h.end(tk) })
		default:
			// An answer with no body, or a refusal's, which held no slot,
			// has ended once it is closed, read or not.
			over := empty || throttled(r.status)
			resp.Body = &endingBody{ReadCloser: resp.Body, h: h, tk: tk, over: over}
		}
		if !throttled(r.status) {
			return resp, nil
		}
		t.stats.throttled.Add(1)

		if !retryable {
			return resp, nil
		}
		// The retry waits for the host's hold too, which may be a policy's
		// other than the one the server's wait is of, with a later reset:
		// it is not made when that passes MaxWait or the deadline, and a
		// Gate is not spent before the hold is over.
		wait, hold := retryWait(h, tk, r, contentLength(send))
		// The request's waits so far count: a retry whose wait would pass
		// what they left of MaxWait is not made.
		if t.policy.MaxWait < maxHint && max(wait, hold) > left {
			return resp, nil
		}
		if wait, err = t.retries.Next(ctx, retry, max(wait, hold), true); err != nil {
			// Waiting cannot help within the bounds: let the caller see why.
			if errors.Is(err, errUnbudgeted) {
				t.stats.unbudgeted.Add(1)
			}
			return resp, nil
		}
		t.stats.retries.Add(1)
		if release != nil {
			// The answer has come: the wait is at no server, and a Gate's
			// slot or window counts from the answer, not from the retry.
			release()
		}
		// The body's drain may put the retry off past the wait, by no
		// more than what the wait leaves of MaxWait.
		grace := drainGrace
		if t.policy.MaxWait < maxHint {
			grace = max(min(grace, left-wait), 0)
		}
		start := time.Now()
		err = sleepDraining(ctx, wait, grace, resp.Body)
		slept := time.Since(start)
		t.stats.waited.Add(int64(slept))
		spend(slept)
		if err != nil {
			return nil, err
		}
	}
}

// throttled reports whether status asks the client to come back later:
// 429 Too Many Requests or 503 Service Unavailable.
func throttled(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable
}

// retryWait returns the wait before the retry of the attempt tk, whose
// throttled answer is r, of a request with bytes of content (-1: unknown):
// the server's wait (see serverWait), or when it gave none, the backoff
// drawn for it (r.backoff); and how long the host h holds the retry, as
// far as is known now (see hostState.holdEnd).
func retryWait(h *hostState, tk ticket, r response, bytes int64) (wait, hold time.Duration) {
	wait, told := serverWait(r.ra, r.hasRA, r.rl, r.hasRL, tk.cost)
	if b := r.ofBytes(); !told && tk.body != nil {
		wait, told = serverWait(r.ra, r.hasRA, b.rl, b.hasRL, tk.body.cost)
	}
	if !told {
		wait = r.backoff
	}
	now := time.Now()
	return wait, h.holdEnd(tk.cost, bytes, now).Sub(now)
}

// admit waits for the host's learned hold, the Gate and the host's quota,
// maxWait at most in all, and returns the granted send, the function that
// gives back what the Gate holds for it (a LeaseGate's slots; nil for
// other Gates), and how long it waited in all, granted or not.
func (t *Transport) admit(req *http.Request, h *hostState, cost int64, maxWait time.Duration) (tk ticket, release func(), spent time.Duration, err error) {
	ctx := req.Context()
	var waited, gated time.Duration
	defer func() {
		if waited > 0 {
			t.stats.held.Add(1)
			t.stats.waited.Add(int64(waited))
		}
		if err != nil && release != nil {
			release()
		}
	}()
	if t.Gate != nil {
		// Wait out a hold before spending at the Gate, so that a slot is not
		// spent on a request that cannot go.
		if err := h.waitHold(ctx, req.URL.Host, cost, contentLength(req), maxWait, &waited); err != nil {
			return ticket{}, release, waited, err
		}
		if err := h.hopeless(ctx, req.URL.Host, cost, contentLength(req), maxWait-waited); err != nil {
			return ticket{}, release, waited, err
		}
		start := time.Now()
		// The Gate's wait is the Transport's own too: bounded by what is
		// left of maxWait, so that a Gate that knows its wait ends beyond
		// it does not begin it, and counted in the wait for the quota.
		// Only its waits count, not its round trips: its deadline is what
		// is left of maxWait and gateCall beyond, for the round trips
		// before and after its waits, which are bounded by what is left,
		// unpadded (see gateWaits).
		gctx, asked := ctx, ctx
		var gw *gateWaits
		if t.policy.MaxWait < maxHint {
			left := maxWait - waited
			var cancel context.CancelFunc
			gctx, cancel = context.WithTimeout(ctx, max(left, 0)+gateCall)
			defer cancel()
			gw = &gateWaits{Context: gctx, start: start, left: left}
			asked = gw
		}
		var err error
		if lg, ok := t.Gate.(LeaseGate); ok {
			release, err = lg.Acquire(asked, cost)
		} else {
			err = t.Gate.Wait(asked, cost)
		}
		if err != nil && ctx.Err() == nil && gctx.Err() != nil && !errors.Is(err, ErrWaitTooLong) {
			err = fmt.Errorf("client: gate: %w: beyond Retry.MaxWait %v", ErrWaitTooLong, t.policy.MaxWait)
		}
		gated = time.Since(start)
		t.stats.waited.Add(int64(gated))
		if gw != nil {
			gated = gw.spent(gated)
		}
		if err != nil && !(t.FailOpen && errors.Is(err, sluice.ErrStoreUnavailable) && ctx.Err() == nil) {
			return ticket{}, release, waited + gated, err
		}
	}
	tk, w, err := h.acquireWith(ctx, req.URL.Host, cost, contentLength(req), maxWait-waited-gated)
	waited += w
	return tk, release, waited + gated, err
}

// emptyBody reports whether resp, the answer to req, has a body with
// nothing to read, whatever its Content-Length says: http.NoBody, a
// Content-Length of 0, the answer to a HEAD, a 204 No Content or a 304
// Not Modified.
func emptyBody(req *http.Request, resp *http.Response) bool {
	return resp.Body == http.NoBody || resp.ContentLength == 0 || req.Method == http.MethodHead ||
		resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusNotModified
}

// releasingBody calls release when it is closed, once however often it
// is closed: it gives back the Gate's hold on its request, or ends (see
// hostState.end) the request whose answer is an upgraded connection.
type releasingBody struct {
	io.ReadCloser
	once    sync.Once
	release func()
}

func (b *releasingBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.release)
	return err
}

// releasingConn is a releasingBody that can be written to: the body of a
// 101 Switching Protocols answer, which net/http gives as the connection
// (an io.ReadWriteCloser), stays one.
type releasingConn struct {
	*releasingBody
	w io.Writer
}

func (c releasingConn) Write(p []byte) (int, error) { return c.w.Write(p) }

// releasing returns body, which calls release when closed (once),
// writable when body is. Reads, to its end or not, release nothing.
func releasing(body io.ReadCloser, release func()) io.ReadCloser {
	b := &releasingBody{ReadCloser: body, release: release}
	if w, ok := body.(io.Writer); ok {
		return releasingConn{b, w}
	}
	return b
}

// endingBody records that its request has ended (hostState.end) when it
// is read to its end, or was cut short (hostState.cutShort) when it is
// closed before that, whichever comes first (once): a concurrency quota's
// slot is held until the server has written the whole answer, and a
// server may go on serving a request, its slot held, after the client
// has hung up. A body closed when over is set ends its request: there is
// nothing to read, or the request held no slot.
type endingBody struct {
	io.ReadCloser
	once sync.Once
	h    *hostState
	tk   ticket
	over bool
}

func (b *endingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.once.Do(func() { b.h.end(b.tk) })
	}
	return n, err
}

func (b *endingBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(func() {
		if b.over {
			b.h.end(b.tk)
		} else {
			b.h.cutShort(b.tk)
		}
	})
	return err
}

// waitHold waits until no Retry-After hold is on the host, adding the
// time waited to *waited. It fails at once with ErrWaitTooLong when the
// holds on a request of cost units and bytes of content (-1: unknown) that
// follow have a known end (see holdEnd) beyond maxWait or the context's
// deadline: a request is not held first by one, then refused for the next.
func (h *hostState) waitHold(ctx context.Context, host string, cost, bytes int64, maxWait time.Duration, waited *time.Duration) error {
	for {
		now := time.Now()
		h.mu.Lock()
		until := h.holdUntil
		var end time.Time
		if now.Before(until) {
			end = h.heldUntil(cost, bytes, now)
		}
		h.mu.Unlock()
		d := until.Sub(now)
		if d <= 0 {
			return nil
		}
		what := "Retry-After of " + host
		if end.After(until) {
			what = "quota of " + host
		}
		if err := checkWait(ctx, end.Sub(now), maxWait, what); err != nil {
			return err
		}
		start := time.Now()
		err := sleep(ctx, d)
		*waited += time.Since(start)
		if err != nil {
			return err
		}
	}
}

// sleepDraining waits d or until ctx is done, as sleep does, while it reads
// up to maxDrain bytes of body so that its connection can be reused; then
// it closes body, cutting the read short when it has not ended within
// grace after the wait (a body that never ends cannot hold the retry), and
// returns once the read has stopped.
func sleepDraining(ctx context.Context, d, grace time.Duration, body io.ReadCloser) error {
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		io.CopyN(io.Discard, body, maxDrain)
	}()
	err := sleep(ctx, d)
	if err == nil {
		timer := time.NewTimer(grace)
		select {
		case <-drained:
		case <-timer.C:
		case <-ctx.Done():
		}
		timer.Stop()
	}
	body.Close()
	<-drained
	return err
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}
