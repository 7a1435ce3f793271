package grpclimit_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/grpclimit"
	"github.com/sluice-dev/sluice/httplimit"
)

// details returns the RetryInfo, QuotaFailure and Help of err as a
// standard client reads them.
func details(t *testing.T, err error) (*errdetails.RetryInfo, *errdetails.QuotaFailure, *errdetails.Help) {
	t.Helper()
	st, ok := status.FromError(err)
	if !ok || st.Code() != codes.ResourceExhausted {
		t.Fatalf("error %v, want RESOURCE_EXHAUSTED", err)
	}
	var ri *errdetails.RetryInfo
	var qf *errdetails.QuotaFailure
	var help *errdetails.Help
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.RetryInfo:
			ri = d
		case *errdetails.QuotaFailure:
			qf = d
		case *errdetails.Help:
			help = d
		case error:
			t.Fatalf("a detail cannot be read: %v", d)
		}
	}
	return ri, qf, help
}

func TestUnaryRefusalCarriesRetryInfoQuotaFailureAndRateLimitTrailers(t *testing.T) {
	t.Parallel()
	free := plan("free", sluice.PerMinute(2))
	free.Upgrade = &httplimit.Upgrade{Plan: "pro", URL: "https://example.com/pricing"}
	pro := plan("pro", sluice.PerMinute(100))
	ts := start(t, grpclimit.Options{Limits: httplimit.Options{Plans: []*httplimit.Plan{free, pro},
		DocsURL: "https://example.com/docs/rate-limits", UnknownKeys: "key"}}) // each key a client of its own
	ctx := context.Background()
	for i := range 2 {
		tr, err := say(ctx, ts.conn, methodSay, "authorization", "Bearer k-1")
		if err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
		// PerMinute(2) is a bucket of 2 refilled one call every 30 s: t is
		// the time until the next one.
		if got, want := tr.Get("ratelimit"), []string{`"per-minute";r=` + string(rune('1'-i)) + `;t=30`}; strings.Join(got, "") != want[0] {
			t.Errorf("call %d: ratelimit trailer %q, want %q", i+1, got, want)
		}
	}
	tr, err := say(ctx, ts.conn, methodSay, "authorization", "Bearer k-1")
	ri, qf, help := details(t, err)
	if ri == nil {
		t.Fatal("no RetryInfo")
	}
	// PerMinute(2) refills one call every 30 s: the delay is the rest of it.
	if d := ri.GetRetryDelay().AsDuration(); d <= 29*time.Second || d > 30*time.Second {
		t.Errorf("RetryInfo delay %v, want just under 30s", d)
	}
	sum := sha256.Sum256([]byte("k-1"))
	if qf == nil || len(qf.Violations) != 1 {
		t.Fatalf("QuotaFailure %v, want one violation", qf)
	}
	v := qf.Violations[0]
	if v.Subject != "key:"+hex.EncodeToString(sum[:]) || v.QuotaId != "per-minute" || v.QuotaMetric != "requests" || len(v.QuotaDimensions) != 1 || v.QuotaDimensions["plan"] != "free" || v.QuotaValue != 2 ||
		v.Description != "per-minute: 2 per 1m on the free plan" {
		t.Errorf("violation %+v", v)
	}
	if help == nil || len(help.Links) != 2 || help.Links[0].Url != "https://example.com/pricing" || help.Links[1].Url != "https://example.com/docs/rate-limits" {
		t.Errorf("Help %v", help)
	}
	msg := status.Convert(err).Message()
	if !strings.HasPrefix(msg, "Rate limit exceeded: 2 requests per minute on the free plan.") || !strings.Contains(msg, "pro plan") {
		t.Errorf("message %q", msg)
	}
	if got := tr.Get("ratelimit"); len(got) != 1 || !strings.HasPrefix(got[0], `"per-minute";r=0;t=`) {
		t.Errorf("ratelimit trailer of the refusal %q", got)
	}
	if got := tr.Get("ratelimit-policy"); len(got) != 1 || got[0] != `"per-minute";q=2;w=60` {
		t.Errorf("ratelimit-policy trailer %q", got)
	}
	if got := tr.Get("retry-after"); len(got) != 1 || got[0] != "30" {
		t.Errorf("retry-after trailer %q, want 30", got)
	}
	// Another key has a quota of its own.
	if _, err := say(ctx, ts.conn, methodSay, "x-api-key", "k-2"); err != nil {
		t.Errorf("another key: %v", err)
	}
}

func TestStreamIsDecidedWhenItOpens(t *testing.T) {
	t.Parallel()
	ts := start(t, grpclimit.Options{Limits: httplimit.Options{Plans: []*httplimit.Plan{plan("free", sluice.PerMinute(1))}}})
	ctx := context.Background()
	n, tr, err := count(ctx, ts.conn, "x-api-key", "k-1")
	if err != nil || n != 3 {
		t.Fatalf("first stream: %d messages, %v", n, err)
	}
	if got := tr.Get("ratelimit"); len(got) != 1 || !strings.HasPrefix(got[0], `"per-minute";r=0;`) {
		t.Errorf("trailers of an admitted stream: %v", tr)
	}
	n, tr, err = count(ctx, ts.conn, "x-api-key", "k-1")
	ri, qf, _ := details(t, err)
	if n != 0 || ri == nil || qf == nil || qf.Violations[0].QuotaId != "per-minute" {
		t.Errorf("second stream: %d messages, RetryInfo %v, QuotaFailure %v", n, ri, qf)
	}
	if d := ri.GetRetryDelay().AsDuration(); d <= 59*time.Second || d > time.Minute {
		t.Errorf("RetryInfo delay %v, want just under a minute", d)
	}
	if tr.Get("retry-after") == nil {
		t.Errorf("trailers of a refused stream: %v", tr)
	}
	if got := ts.refused(); got != 1 {
		t.Errorf("%d refusals decided, want 1 (a stream is one call)", got)
	}
}

func TestMethodsCostTheirPlanCostsAndExemptMethodsAreFree(t *testing.T) {
	t.Parallel()
	p := plan("free", sluice.PerMinute(4))
	p.Costs = map[string]int64{methodHeavy: 3}
	ts := start(t, grpclimit.Options{Limits: httplimit.Options{Plans: []*httplimit.Plan{p}, Exempt: []string{"/sluice.test.Echo/Count"}}})
	ctx := context.Background()
	if _, err := say(ctx, ts.conn, methodHeavy, "x-api-key", "k"); err != nil {
		t.Fatal(err)
	}
	_, err := say(ctx, ts.conn, methodHeavy, "x-api-key", "k") // 3 more than the 1 left
	_, qf, _ := details(t, err)
	if !strings.Contains(qf.Violations[0].Description, "this call costs 3 units") {
		t.Errorf("violation %q does not say the cost", qf.Violations[0].Description)
	}
	if _, err := say(ctx, ts.conn, methodSay, "x-api-key", "k"); err != nil {
		t.Errorf("a call of cost 1 fits the unit left: %v", err)
	}
	for range 3 {
		if n, _, err := count(ctx, ts.conn, "x-api-key", "k"); err != nil || n != 3 {
			t.Errorf("exempt stream: %d, %v", n, err)
		}
	}
}

// The peer is 127.0.0.1. Untrusted, it cannot pose as other clients with
// forwarding or user metadata; trusted, its forwarding metadata name the
// clients.
func TestForwardedAndUserMetadataAreBelievedOnlyFromTrustedPeers(t *testing.T) {
	t.Parallel()
	limits := func(trusted ...string) httplimit.Options {
		o := httplimit.Options{Plans: []*httplimit.Plan{plan("free", sluice.PerMinute(1))}, UserHeader: "x-user"}
		for _, p := range trusted {
			o.TrustedProxies = append(o.TrustedProxies, prefix(p))
		}
		return o
	}
	ctx := context.Background()
	spoof := func(ts *testServer, i int) error {
		ip := "203.0.113." + string(rune('1'+i))
		_, err := say(ctx, ts.conn, methodSay, "x-forwarded-for", ip)
		return err
	}
	untrusted := start(t, grpclimit.Options{Limits: limits("10.0.0.0/8")})
	if err := spoof(untrusted, 0); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < 4; i++ {
		if err := spoof(untrusted, i); status.Code(err) != codes.ResourceExhausted {
			t.Errorf("untrusted peer, x-forwarded-for %d: %v, want RESOURCE_EXHAUSTED", i, err)
		}
	}
	if _, err := say(ctx, untrusted.conn, methodSay, "x-user", "someone-else"); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("untrusted peer posing as a user: %v, want RESOURCE_EXHAUSTED", err)
	}
	for _, d := range untrusted.decisions() {
		if d.subject != "ip:127.0.0.1" {
			t.Errorf("untrusted peer limited as %q", d.subject)
		}
	}

	trusted := start(t, grpclimit.Options{Limits: limits("127.0.0.0/8")})
	for i := range 4 {
		if err := spoof(trusted, i); err != nil {
			t.Errorf("trusted peer, client %d: %v", i, err)
		}
	}
	if _, err := say(ctx, trusted.conn, methodSay, "x-user", "ada"); err != nil {
		t.Errorf("trusted peer's user: %v", err)
	}
	if got := trusted.decisions(); got[0].subject != "ip:203.0.113.1" || got[4].subject != "user:ada" {
		t.Errorf("trusted peer's clients limited as %q and %q", got[0].subject, got[4].subject)
	}
}

func TestAPIKeysAreReadFromConfiguredMetadata(t *testing.T) {
	t.Parallel()
	ts := start(t, grpclimit.Options{Limits: httplimit.Options{Plans: []*httplimit.Plan{plan("free", sluice.PerMinute(1))},
		APIKeyHeaders: []string{"x-tenant-key"}, UnknownKeys: "key"}}) // each key a client of its own
	ctx := context.Background()
	for _, k := range []string{"a", "b"} {
		if _, err := say(ctx, ts.conn, methodSay, "x-tenant-key", k); err != nil {
			t.Errorf("key %s: %v", k, err)
		}
	}
	// Not configured: authorization is not read, so the call is the peer's.
	if _, err := say(ctx, ts.conn, methodSay, "authorization", "Bearer c"); err != nil {
		t.Errorf("peer's first call: %v", err)
	}
	if _, err := say(ctx, ts.conn, methodSay, "authorization", "Bearer d"); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("peer's second call: %v", err)
	}
}

// brokenStore cannot decide.
type brokenStore struct{}

func (brokenStore) Apply(context.Context, []sluice.Check, []sluice.Status) error {
	return fmt.Errorf("test store: %w", sluice.ErrStoreUnavailable)
}

func TestNoDecisionFailsOpenOrAsOnErrorSays(t *testing.T) {
	t.Parallel()
	limits := httplimit.Options{Plans: []*httplimit.Plan{plan("free", sluice.PerMinute(1))},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	serve := func(o grpclimit.Options) *grpc.ClientConn {
		s, err := grpclimit.New(sluice.NewLimiter(brokenStore{}), o)
		if err != nil {
			t.Fatal(err)
		}
		return serveWith(t, grpc.ChainUnaryInterceptor(s.UnaryInterceptor()))
	}
	ctx := context.Background()
	if _, err := say(ctx, serve(grpclimit.Options{Limits: limits}), methodSay); err != nil {
		t.Errorf("by default a call no one could decide is served: %v", err)
	}
	var seen error
	closed := serve(grpclimit.Options{Limits: limits, OnError: func(_ context.Context, method string, err error) error {
		seen = err
		return status.Error(codes.Unavailable, "rate limiter unavailable for "+method)
	}})
	if _, err := say(ctx, closed, methodSay); status.Code(err) != codes.Unavailable || !errors.Is(seen, sluice.ErrStoreUnavailable) {
		t.Errorf("OnError's answer: %v (OnError saw %v)", err, seen)
	}
}

func TestNewRefusesWhatHTTPLimitRefusesAndAnHTTPErrorHandler(t *testing.T) {
	limiter := sluice.NewLimiter(brokenStore{})
	_, err := grpclimit.New(limiter, grpclimit.Options{Limits: httplimit.Options{Plans: []*httplimit.Plan{plan("free", sluice.PerSecond(0))}}})
	var fe *httplimit.FieldError
	if !errors.As(err, &fe) || !strings.HasPrefix(fe.Field, "Plans[0].Limits[0]") {
		t.Errorf("an invalid limit: %v", err)
	}
	_, err = grpclimit.New(limiter, grpclimit.Options{Limits: httplimit.Options{Plans: []*httplimit.Plan{plan("free", sluice.PerSecond(1))},
		ErrorHandler: func(http.ResponseWriter, *http.Request, error) bool { return true }}})
	if err == nil || !strings.Contains(err.Error(), "OnError") {
		t.Errorf("an ErrorHandler: %v", err)
	}
}

// A call whose caller gave up before its decision is answered with its
// context's status, not served and not taken for a store failure.
func TestCallerThatGaveUpIsNoFailureToDecide(t *testing.T) {
	t.Parallel()
	called := false
	s, err := grpclimit.New(sluice.NewLimiter(ctxStore{}), grpclimit.Options{
		Limits:  httplimit.Options{Plans: []*httplimit.Plan{plan("free", sluice.PerMinute(1))}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		OnError: func(context.Context, string, error) error { called = true; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	served := false
	_, err = s.UnaryInterceptor()(ctx, nil, &grpc.UnaryServerInfo{FullMethod: methodSay}, func(context.Context, any) (any, error) {
		served = true
		return nil, nil
	})
	if status.Code(err) != codes.Canceled || served || called {
		t.Errorf("a call cancelled before its decision: %v, served %v, OnError called %v; want Canceled, neither", err, served, called)
	}
}

// ctxStore fails with its caller's context error, as a network store does
// for a caller that gave up, or as brokenStore when the caller waits.
type ctxStore struct{}

func (ctxStore) Apply(ctx context.Context, c []sluice.Check, out []sluice.Status) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("caller gave up: %w", err)
	}
	return brokenStore{}.Apply(ctx, c, out)
}

func TestARefusalByGlobalLimitsAloneIsUnavailableWhenGlobalStatusSaysSo(t *testing.T) {
	t.Parallel()
	ts := start(t, grpclimit.Options{Limits: httplimit.Options{
		Plans:        []*httplimit.Plan{plan("free", sluice.PerMinute(100))},
		Global:       []sluice.Limit{sluice.PerMinute(1).Named("service")},
		GlobalStatus: http.StatusServiceUnavailable,
	}})
	ctx := context.Background()
	if _, err := say(ctx, ts.conn, methodSay, "authorization", "Bearer k-1"); err != nil {
		t.Fatal(err)
	}
	tr, err := say(ctx, ts.conn, methodSay, "authorization", "Bearer k-2")
	st, _ := status.FromError(err)
	if st.Code() != codes.Unavailable {
		t.Fatalf("error %v, want UNAVAILABLE: the service, not the client, is at its limit (as the HTTP answer's 503 and sluice serve's proxy say)", err)
	}
	var ri *errdetails.RetryInfo
	for _, d := range st.Details() {
		if d, ok := d.(*errdetails.RetryInfo); ok {
			ri = d
		}
	}
	if ri == nil || ri.GetRetryDelay().AsDuration() <= 0 {
		t.Errorf("RetryInfo %v, want the wait", ri)
	}
	if len(tr.Get("retry-after")) == 0 {
		t.Error("no retry-after trailer")
	}
}
