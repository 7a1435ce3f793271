package sluice

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// OnStoreError is what a Failover does with a call its primary store could
// not decide: the on_store_error setting of a policy. The zero value is
// FailLocal, the default.
type OnStoreError uint8

const (
	// FailLocal ("local") decides on a local store instead, with every
	// limit divided by the number of instances that share the primary, so
	// that together they admit about what the shared limit admits.
	FailLocal OnStoreError = iota
	// FailOpen ("allow") admits every check: availability over protection.
	FailOpen
	// FailClosed ("deny") refuses every check: protection over availability.
	FailClosed
)

var onStoreErrorNames = [...]string{FailLocal: "local", FailOpen: "allow", FailClosed: "deny"}

// String returns the configuration name: "local", "allow" or "deny".
func (p OnStoreError) String() string {
	if p.Valid() {
		return onStoreErrorNames[p]
	}
	return fmt.Sprintf("on-store-error(%d)", uint8(p))
}

// Valid reports whether p is one of the declared policies.
func (p OnStoreError) Valid() bool { return p <= FailClosed }

// ParseOnStoreError returns the OnStoreError named s: "local", "allow" or
// "deny".
func ParseOnStoreError(s string) (OnStoreError, error) {
	for p, name := range onStoreErrorNames {
		if name == s {
			return OnStoreError(p), nil
		}
	}
	return 0, fmt.Errorf("unknown on_store_error %q (use local, allow or deny)", s)
}

// DefaultStoreTimeout is how long a Failover waits for its primary store
// before it counts the call as failed and applies its policy.
const DefaultStoreTimeout = 50 * time.Millisecond

// FailoverOptions configures a Failover. The zero value means: fall back to
// the local store, one instance, 50 ms per call, the default breaker.
type FailoverOptions struct {
	// Policy is what to do when the primary cannot decide.
	Policy OnStoreError
	// Timeout bounds each call to the primary (context.WithTimeout around
	// it, so the primary must honour its context; the stores of this module
	// do). DefaultStoreTimeout (50 ms) when zero; no bound when negative. A
	// caller's own earlier deadline still wins, and is the caller's error.
	Timeout time.Duration
	// Instances is how many instances share the primary's quota, used by
	// FailLocal to divide each limit; values below 1 mean 1, values above
	// 65536 mean 65536.
	Instances int
	// Breaker configures the circuit breaker in front of the primary.
	Breaker BreakerOptions
	// OnFallback, when not nil, is called once for every call decided by the
	// policy instead of the primary, after out is filled and before Apply
	// returns, with the reason: the primary's error, or ErrCircuitOpen when
	// the breaker kept the call from the primary. It runs on the caller's
	// goroutine, concurrently with other calls: keep it quick (count, not
	// log; Breaker.OnStateChange is the place for a log line).
	OnFallback func(reason error)
}

// FailoverStats counts what a Failover has done since it was made.
type FailoverStats struct {
	// StoreErrors counts calls the primary was asked and failed: an error
	// or a timeout. Calls the caller abandoned and invalid checks are not
	// store errors and are not counted.
	StoreErrors int64
	// FallbackDecisions counts calls decided by the policy instead of the
	// primary: after a store error, or without asking the primary while the
	// breaker was open. A FailLocal fallback that itself fails is not a
	// decision and is not counted.
	FallbackDecisions int64
	// BreakerOpens counts how often the breaker opened, re-openings after
	// a failed probe included.
	BreakerOpens int64
	// Breaker is the breaker's state now.
	Breaker BreakerState
}

// A Failover is a Store that makes a remote primary store (Redis) safe to
// depend on: it bounds every call with a timeout, keeps calls away from a
// primary that keeps failing with a circuit breaker, and decides the calls
// the primary cannot decide by its policy — FailLocal, FailOpen or
// FailClosed — so that an outage costs neither a panic nor an unbounded wait.
//
// A call goes to the primary unless the breaker is open. If the primary
// answers, its answer is returned as it is. If it fails (an error, or no
// answer within Timeout), the failure is counted, fed to the breaker, and
// the call is decided by the policy:
//
//   - FailLocal: by the local store, each check's Limit replaced by its share
//     for one of Instances instances: window algorithms admit ⌊Q/n⌋ (at
//     least 1) per window; buckets hold ⌊B/n⌋ (at least 1) and refill at
//     exactly Q/(n·W). A check that fits its shared limit but not this
//     instance's share gets RetryAfter OpenFor (the primary may be back by
//     then), not Never.
//   - FailOpen: every check Allowed, with Remaining its limit's Burst (as if
//     untouched) and no wait.
//   - FailClosed: every check refused, Remaining 0, with RetryAfter and
//     ResetAfter the breaker's OpenFor: the soonest the primary may be
//     asked again.
//
// In every policy a check whose Cost exceeds its limit's Burst is refused
// with RetryAfter Never, as every store refuses it; that needs no store.
// Every decision made by the policy is counted in Stats and reported to
// OnFallback, so a caller can always tell it from the primary's.
//
// A caller that gives up (its ctx is done, before or during the call) gets
// an error wrapping ctx.Err(), never a fallback decision, and its call does
// not count against the primary. Errors wrapping ErrInvalidCheck or
// ErrInvalidLimit are the caller's and are returned as they are. If the
// local store fails too, the error wraps ErrStoreUnavailable.
//
// Recovery is automatic: OpenFor after the breaker opened, one probe call
// goes to the primary; its success closes the breaker and every later call
// is the primary's again. With the defaults a primary that is back serves
// decisions again within about 550 ms (500 ms open plus at most one 50 ms
// probe that failed just before it came back).
//
// An OverLimitCache used as the primary is recognised: the calls it answers
// without asking its own store say nothing about that store's health, so
// they neither close the breaker nor reset its failure count. Put the cache
// inside the Failover, around the remote store, so that it only remembers the
// remote store's answers:
//
//	sluice.NewFailover(sluice.NewOverLimitCache(redisStore, sluice.OverLimitOptions{}),
//		memory.New(), sluice.FailoverOptions{Instances: 4})
//
// A Failover is safe for concurrent use when its stores are.
type Failover struct {
	primary    Store
	cache      localAnswerer // primary, if it can answer without its store
	local      Store
	policy     OnStoreError
	timeout    time.Duration
	instances  int64
	onFallback func(error)
	breaker    Breaker

	storeErrors atomic.Int64
	fallbacks   atomic.Int64
	scratch     sync.Pool // *[]Check for the scaled checks of FailLocal

	sharesMu sync.RWMutex
	shares   map[Limit]Limit // limit → this instance's share, for FailLocal
}

// maxShares bounds Failover.shares; limits are few (they come from the
// configuration), so overflowing it just starts it afresh.
const maxShares = 1024

// localAnswerer is a Store that can tell whether it answered a call without
// asking the store behind it (OverLimitCache).
type localAnswerer interface {
	applyNoting(ctx context.Context, checks []Check, out []Status) (local bool, err error)
}

// NewFailover returns a Failover in front of primary that decides by
// opts.Policy when primary cannot. local is the store FailLocal decides on
// (typically a memory.Store) and may be nil for the other policies. It
// returns an error if primary is nil, if opts.Policy is not valid, or if
// local is nil under FailLocal.
func NewFailover(primary, local Store, opts FailoverOptions) (*Failover, error) {
	switch {
	case primary == nil:
		return nil, errors.New("sluice: NewFailover with a nil primary store")
	case !opts.Policy.Valid():
		return nil, fmt.Errorf("sluice: NewFailover with invalid policy %v", opts.Policy)
	case local == nil && opts.Policy == FailLocal:
		return nil, errors.New("sluice: NewFailover with policy local needs a local store")
	}
	f := &Failover{
		primary:    primary,
		local:      local,
		policy:     opts.Policy,
		timeout:    opts.Timeout,
		instances:  int64(min(max(opts.Instances, 1), maxInstances)),
		onFallback: opts.OnFallback,
		breaker:    Breaker{opts: opts.Breaker},
	}
	f.cache, _ = primary.(localAnswerer)
	if f.timeout == 0 {
		f.timeout = DefaultStoreTimeout
	}
	f.scratch.New = func() any { s := make([]Check, 0, 8); return &s }
	return f, nil
}

// Stats returns the current counts. Each field is read atomically, but not
// all at the same instant.
func (f *Failover) Stats() FailoverStats {
	return FailoverStats{
		StoreErrors:       f.storeErrors.Load(),
		FallbackDecisions: f.fallbacks.Load(),
		BreakerOpens:      f.breaker.Opens(),
		Breaker:           f.breaker.State(),
	}
}

// Apply implements Store.
func (f *Failover) Apply(ctx context.Context, checks []Check, out []Status) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("failover: %w", err)
	}
	ticket, ok := f.breaker.Allow()
	if !ok {
		return f.fallback(ctx, checks, out, ErrCircuitOpen)
	}
	answeredLocally, err := f.callPrimary(ctx, checks, out)
	switch {
	case err == nil:
		if answeredLocally {
			f.breaker.Release(ticket)
		} else {
			f.breaker.Done(ticket, true)
		}
		return nil
	case ctx.Err() != nil:
		f.breaker.Release(ticket)
		return fmt.Errorf("failover: caller gave up: %w (primary store: %v)", ctx.Err(), err)
	case errors.Is(err, ErrInvalidCheck) || errors.Is(err, ErrInvalidLimit):
		f.breaker.Release(ticket)
		return fmt.Errorf("failover: %w", err)
	}
	f.storeErrors.Add(1)
	f.breaker.Done(ticket, false)
	return f.fallback(ctx, checks, out, fmt.Errorf("primary store: %w", err))
}

func (f *Failover) callPrimary(ctx context.Context, checks []Check, out []Status) (answeredLocally bool, err error) {
	if f.timeout > 0 {
		// A caller's deadline that comes first bounds the call already.
		if d, ok := ctx.Deadline(); !ok || time.Until(d) > f.timeout {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, f.timeout)
			defer cancel()
		}
	}
	if f.cache != nil {
		return f.cache.applyNoting(ctx, checks, out)
	}
	return false, f.primary.Apply(ctx, checks, out)
}

// fallback decides checks by the policy because of reason.
func (f *Failover) fallback(ctx context.Context, checks []Check, out []Status, reason error) error {
	switch f.policy {
	case FailOpen:
		for i := range checks {
			out[i] = Status{Allowed: true, Remaining: checks[i].Limit.Burst()}
		}
	case FailClosed:
		d := f.breaker.OpenFor()
		for i := range checks {
			out[i] = Status{RetryAfter: d, ResetAfter: d}
		}
	default:
		if err := f.applyLocal(ctx, checks, out); err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return fmt.Errorf("failover: caller gave up: %w (%v)", cerr, reason)
			}
			return fmt.Errorf("failover: %w; local fallback: %w", unavailable(reason), err)
		}
	}
	for i := range checks {
		if c := &checks[i]; c.Cost > c.Limit.Burst() {
			out[i] = Status{Remaining: out[i].Remaining, ResetAfter: out[i].ResetAfter, RetryAfter: Never}
		}
	}
	f.fallbacks.Add(1)
	if f.onFallback != nil {
		f.onFallback(reason)
	}
	return nil
}

// applyLocal decides checks on the local store with each limit replaced by
// this instance's share.
func (f *Failover) applyLocal(ctx context.Context, checks []Check, out []Status) error {
	if f.instances == 1 {
		return f.local.Apply(ctx, checks, out)
	}
	p := f.scratch.Get().(*[]Check)
	shares := append((*p)[:0], checks...)
	for i := range shares {
		shares[i].Limit = f.share(shares[i].Limit)
	}
	err := f.local.Apply(ctx, shares, out)
	clear(shares) // keep no keys alive in the pool
	*p = shares[:0]
	f.scratch.Put(p)
	if err != nil {
		return err
	}
	for i := range checks {
		// Too big for this instance's share, not for the shared limit: it
		// fits once the primary is back.
		if out[i].RetryAfter == Never && checks[i].Cost <= checks[i].Limit.Burst() {
			out[i].RetryAfter = f.breaker.OpenFor()
		}
	}
	return nil
}

// share returns l.perInstance(f.instances), remembered: building a limit
// costs allocations, and during an outage every call needs its shares.
func (f *Failover) share(l Limit) Limit {
	f.sharesMu.RLock()
	s, ok := f.shares[l]
	f.sharesMu.RUnlock()
	if ok {
		return s
	}
	s = l.perInstance(f.instances)
	f.sharesMu.Lock()
	if len(f.shares) >= maxShares || f.shares == nil {
		f.shares = make(map[Limit]Limit)
	}
	f.shares[l] = s
	f.sharesMu.Unlock()
	return s
}

// unavailable returns err wrapping ErrStoreUnavailable.
func unavailable(err error) error {
	if errors.Is(err, ErrStoreUnavailable) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrStoreUnavailable, err)
}
