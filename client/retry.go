package client

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"
)

// Defaults of RetryPolicy's zero fields.
const (
	// DefaultMaxRetries is the most retries of one request.
	DefaultMaxRetries = 3
	// DefaultBackoffBase is the backoff ceiling of the first retry when the
	// server gives no wait; it doubles with each retry.
	DefaultBackoffBase = 100 * time.Millisecond
	// DefaultBackoffCap is the largest backoff ceiling.
	DefaultBackoffCap = 10 * time.Second
	// DefaultMaxWait is the longest the Transport waits on its own.
	DefaultMaxWait = time.Minute
	// DefaultBudgetRatio is the retries each request adds to the budget.
	DefaultBudgetRatio = 0.1
	// DefaultBudgetFloor is the retries the budget holds at most, and at
	// the start.
	DefaultBudgetFloor = 10
)

// RetryPolicy says when and how Transport retries a request that was
// answered 429 Too Many Requests or 503 Service Unavailable. The zero value
// is the recommended policy: up to 3 retries of idempotent requests, waits
// from the server's headers or else exponential backoff with full jitter
// from 100ms to 10s, no request held longer than a minute by its waits
// in all, and a retry budget of 10 retries plus one per ten requests.
//
// The wait before a retry is what the server said when it said anything:
// Retry-After, which takes precedence over the RateLimit fields, or
// without it, when the quota is spent for the request (less of it left
// than the request costs, in requests or in content bytes), its reset
// (from any of the four RateLimit header formats), an hour at most. Only without either does the
// Transport guess, with exponential backoff and full jitter (a wait drawn
// uniformly from [0, min(BackoffCap, BackoffBase·2^retry)]), so that many
// clients that failed together do not come back together; a 429 that says
// nothing holds its host for that backoff. A server-given
// wait is not jittered: it is already the earliest time that can succeed.
// A retry the host's learned quota holds longer (another policy, with too
// little left for the request until a later reset) waits for that hold
// too: the retry's wait is the longer of the two.
type RetryPolicy struct {
	// MaxRetries is the most retries of one request: 0 means
	// DefaultMaxRetries, a negative value disables retries. The total
	// number of attempts is at most MaxRetries+1.
	MaxRetries int
	// BackoffBase and BackoffCap shape the backoff used when the server
	// gives no wait; 0 means DefaultBackoffBase and DefaultBackoffCap. A
	// BackoffCap set is kept, a base above it lowered to it (BackoffCap
	// 50ms alone draws every backoff from [0, 50ms]); a default cap below
	// the BackoffBase set is raised to it.
	BackoffBase, BackoffCap time.Duration
	// MaxWait is the longest the Transport waits on its own for one
	// request, its waits counted together (the Gate's, the holds', a
	// slot's, and those before its retries): a retry that would have to
	// wait longer is not made (the 429 or 503 is returned as it came), and
	// a request that would be held longer for a spent quota fails with
	// ErrWaitTooLong (Retries.Next, outside a Transport, bounds each wait
	// by it alone). 0 means DefaultMaxWait; a negative value means no
	// bound (only the request's context limits the wait).
	MaxWait time.Duration
	// BudgetRatio and BudgetFloor bound retries across all requests of the
	// Transport, so that a failing server is not hammered by retries: every
	// request adds BudgetRatio to a budget holding at most BudgetFloor
	// retries (full at the start), and every retry takes one. Over any
	// stretch of time, retries ≤ BudgetFloor + BudgetRatio × requests.
	// 0 means DefaultBudgetRatio and DefaultBudgetFloor; a negative
	// BudgetRatio disables the budget, a negative BudgetFloor means 0.
	BudgetRatio float64
	BudgetFloor int
	// RetryNonIdempotent retries every method. By default only GET, HEAD,
	// OPTIONS, TRACE, PUT and DELETE are retried, and other methods only
	// when the request has an Idempotency-Key (or X-Idempotency-Key)
	// header, as net/http does. A request with a body is retried only if
	// its GetBody is set (http.NewRequest sets it for bytes, strings and
	// bytes.Buffer bodies), whatever the method.
	RetryNonIdempotent bool
}

// withDefaults returns p with its zero fields filled in.
func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxRetries == 0 {
		p.MaxRetries = DefaultMaxRetries
	}
	if p.MaxRetries < 0 {
		p.MaxRetries = 0
	}
	if p.BackoffBase <= 0 {
		p.BackoffBase = DefaultBackoffBase
	}
	if p.BackoffCap <= 0 {
		p.BackoffCap = max(DefaultBackoffCap, p.BackoffBase)
	}
	p.BackoffBase = min(p.BackoffBase, p.BackoffCap)
	if p.MaxWait == 0 {
		p.MaxWait = DefaultMaxWait
	}
	if p.MaxWait < 0 {
		p.MaxWait = maxHint
	}
	if p.BudgetRatio == 0 {
		p.BudgetRatio = DefaultBudgetRatio
	}
	if p.BudgetFloor == 0 {
		p.BudgetFloor = DefaultBudgetFloor
	}
	p.BudgetFloor = max(p.BudgetFloor, 0)
	return p
}

// Retries applies a RetryPolicy to the calls of one client: how many times
// one call is retried, how long it waits, and the retry budget shared by
// all its calls. Transport keeps one; other clients of rate-limited
// servers (grpclimit's retry interceptor) can keep theirs. It is safe for
// concurrent use. The zero Retries follows the zero RetryPolicy, whose
// fields take their defaults: the recommended policy.
type Retries struct {
	once   sync.Once
	policy RetryPolicy
	budget *budget
}

// NewRetries returns the Retries of p, its zero fields taking their
// defaults.
func NewRetries(p RetryPolicy) *Retries {
	return &Retries{policy: p}
}

// ready fills in the policy's defaults and makes the budget, once.
func (r *Retries) ready() {
	r.once.Do(func() {
		r.policy = r.policy.withDefaults()
		r.budget = newBudget(&r.policy)
	})
}

// Policy returns the policy, its defaults filled in.
func (r *Retries) Policy() RetryPolicy {
	r.ready()
	return r.policy
}

// Call records one call (not a retry): it adds BudgetRatio to the budget.
func (r *Retries) Call() {
	r.ready()
	r.budget.deposit()
}

// Next decides retry number retry (0 for the first) of a call that was
// refused. wait is the server's wait when told is true (at most an hour
// counts: a longer one is waited an hour); otherwise Next draws a backoff. It returns how long to wait before retrying, or an
// error when the call must not be retried: MaxRetries reached
// (ErrNoRetry), a wait beyond MaxWait or the context's deadline (an error
// wrapping ErrWaitTooLong), or a spent budget (ErrNoRetry). A nil error
// takes one retry from the budget.
func (r *Retries) Next(ctx context.Context, retry int, wait time.Duration, told bool) (time.Duration, error) {
	r.ready()
	if retry >= r.policy.MaxRetries {
		return 0, fmt.Errorf("%w: %d retries made", ErrNoRetry, retry)
	}
	if told {
		wait = min(wait, maxServerWait)
	} else {
		wait = backoff(r.policy.BackoffBase, r.policy.BackoffCap, retry)
	}
	if err := checkWait(ctx, wait, r.policy.MaxWait, "retry"); err != nil {
		return 0, err
	}
	if !r.budget.withdraw() {
		return 0, errUnbudgeted
	}
	return wait, nil
}

// ErrNoRetry is wrapped by Retries.Next's refusals to retry that are not
// about a wait: too many retries of one call, or a spent budget.
var ErrNoRetry = errors.New("no retry")

var errUnbudgeted = fmt.Errorf("%w: the retry budget is spent", ErrNoRetry)

// backoff is the full-jitter wait before retry number retry (0 for the
// first): uniform in [0, min(cap, base·2^retry)].
func backoff(base, cap time.Duration, retry int) time.Duration {
	ceil := base
	for i := 0; i < retry && ceil < cap; i++ {
		ceil *= 2 // base ≤ cap ≤ MaxInt64/2 in practice; cap checked below
		if ceil <= 0 {
			ceil = cap
		}
	}
	ceil = min(ceil, cap)
	if ceil == math.MaxInt64 {
		return time.Duration(rand.Int64N(int64(ceil))) // + 1 would overflow
	}
	return time.Duration(rand.Int64N(int64(ceil) + 1))
}

// maxServerWait is the longest a server's wait holds: a Retry-After or a
// reset beyond it (a server's bug, a clock gone wrong, a quota spent for
// the month) counts as it, after which one probe asks again. A quota spent
// for a day costs a request an hour.
const maxServerWait = time.Hour

// serverWait is the wait the server asked for after a throttled response:
// its Retry-After when it has one, which takes precedence over the
// RateLimit fields (draft-ietf-httpapi-ratelimit-headers: it MUST, and
// the reset MAY be ignored), else the reset of a quota spent for a
// request of cost units (less of it left than cost, or none); told is
// false when it said neither. A wait finer than a second (gRPC's
// RetryInfo) is kept as it is.
func serverWait(ra time.Duration, hasRA bool, rl RateLimit, hasRL bool, cost int64) (wait time.Duration, told bool) {
	switch {
	case hasRA:
		wait, told = ra, true
	case hasRL && (rl.Remaining == 0 || rl.Remaining < cost) && rl.Reset > 0:
		wait, told = rl.Reset, true
	}
	return min(wait, maxServerWait), told
}

// budget is a token bucket of retries: capacity floor, refilled by ratio
// per request. It is safe for concurrent use.
type budget struct {
	mu        sync.Mutex
	unlimited bool
	balance   float64
	capacity  float64
	ratio     float64
}

func newBudget(p *RetryPolicy) *budget {
	return &budget{
		unlimited: p.BudgetRatio < 0,
		balance:   float64(p.BudgetFloor),
		capacity:  float64(p.BudgetFloor),
		ratio:     p.BudgetRatio,
	}
}

// deposit records one request.
func (b *budget) deposit() {
	if b.unlimited {
		return
	}
	b.mu.Lock()
	b.balance = min(b.balance+b.ratio, max(b.capacity, 1))
	b.mu.Unlock()
}

// withdraw takes one retry from the budget, reporting false when it is
// spent.
func (b *budget) withdraw() bool {
	if b.unlimited {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.balance < 1 {
		return false
	}
	b.balance--
	return true
}

// idempotent reports whether req may be sent twice without changing what
// it does, by its method or an idempotency key.
func idempotent(req *http.Request) bool {
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace, http.MethodPut, http.MethodDelete:
		return true
	}
	_, key := req.Header["Idempotency-Key"]
	_, xkey := req.Header["X-Idempotency-Key"]
	return key || xkey
}

// rewindable reports whether req's body can be sent again.
func rewindable(req *http.Request) bool {
	return req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
}

// rewind returns a copy of req with a fresh body, for a retry.
func rewind(req *http.Request) (*http.Request, error) {
	r := req.Clone(req.Context())
	if req.Body != nil && req.Body != http.NoBody {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		r.Body = body
	}
	return r, nil
}
