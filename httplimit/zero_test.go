package httplimit_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// The zero Middleware limits nothing and never panics: its Handler serves
// every request (a decision that failed, as New's default ErrorHandler
// serves one), its decisions are errors, its standing answers 503, and it
// reports no identity, limits or headers.
func TestZeroMiddlewareLimitsNothing(t *testing.T) {
	var m httplimit.Middleware
	ctx := context.Background()
	r := httptest.NewRequest(http.MethodGet, "/v1/items", nil)
	r.RemoteAddr = "192.0.2.7:4000"
	r.Header.Set("X-Forwarded-For", "203.0.113.9")
	served := 0
	rec := httptest.NewRecorder()
	m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served++ })).ServeHTTP(rec, r)
	if served != 1 || rec.Code != http.StatusOK {
		t.Errorf("Handler: served %d times, status %d; want the request served", served, rec.Code)
	}
	if _, err := m.Decide(r); !errors.Is(err, sluice.ErrStoreUnavailable) {
		t.Errorf("Decide: %v, want ErrStoreUnavailable", err)
	}
	if _, err := m.DecideFor(ctx, httplimit.Requester{}, http.MethodGet, "/", 1); !errors.Is(err, sluice.ErrStoreUnavailable) {
		t.Errorf("DecideFor: %v, want ErrStoreUnavailable", err)
	}
	if _, err := m.Inspect(ctx, "ip:192.0.2.7", ""); !errors.Is(err, sluice.ErrStoreUnavailable) {
		t.Errorf("Inspect: %v, want ErrStoreUnavailable", err)
	}
	rec = httptest.NewRecorder()
	m.StatusHandler().ServeHTTP(rec, r)
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("StatusHandler: %d, want 503", rec.Code)
	}
	if got := m.ClientAddr(r).String(); got != "192.0.2.7" {
		t.Errorf("ClientAddr: %s, want the peer (no proxy trusted)", got)
	}
	if _, trusted := m.Peer(r); trusted {
		t.Error("Peer: trusted")
	}
	if sub := m.UserSubject("alice"); sub != "" {
		t.Errorf("UserSubject: %q", sub)
	}
	if h := m.RequestHeaders(); h != nil {
		t.Errorf("RequestHeaders: %v", h)
	}
	_ = m.ResponseHeaders()
	_ = m.Counts()
	_ = m.Policy()
}

// A nil Result, the Result of a Decide that failed, is ignored by the
// calls that end a request, and Refuse answers it with a 500 problem: a
// caller who defers Done before checking Decide's error does not panic.
func TestNilResultIsIgnored(t *testing.T) {
	var m httplimit.Middleware
	ctx := context.Background()
	m.Done(ctx, nil)
	m.DoneWithStatus(ctx, nil, http.StatusOK)
	m.DoneWithResponse(ctx, nil, http.StatusOK, http.Header{})
	m.Discard(nil)
	if p := m.Keep(nil); p != nil {
		t.Errorf("Keep(nil): %v", p)
	}
	h := http.Header{}
	m.WriteHeaders(h, nil)
	if len(h) != 0 {
		t.Errorf("WriteHeaders(nil) wrote %v", h)
	}
	rec := httptest.NewRecorder()
	m.Refuse(rec, httptest.NewRequest(http.MethodGet, "/v1/items", nil), nil)
	if rec.Code != http.StatusInternalServerError || rec.Header().Get("Content-Type") != "application/problem+json" {
		t.Errorf("Refuse(nil): %d %q, want a 500 problem", rec.Code, rec.Header().Get("Content-Type"))
	}
}
