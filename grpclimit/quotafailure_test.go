package grpclimit_test

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"net"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/grpclimit"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// A QuotaFailure violation names the quota that refused: a rule's limit
// keyed by something other than the client is the rule's quota, shared by
// every caller with that key, not the client's; a global limit is the
// service's; each is described with what the call costs of it (a rule's
// own Cost, not the method's).
func TestQuotaFailureNamesWhoseQuotaEachViolationIs(t *testing.T) {
	t.Parallel()
	store := memory.New()
	defer store.Close()
	p := plan("free", sluice.PerMinute(100))
	p.Costs = map[string]int64{methodHeavy: 2}
	one := int64(1)
	s, err := grpclimit.New(sluice.NewLimiter(store), grpclimit.Options{Limits: httplimit.Options{
		Plans:  []*httplimit.Plan{p},
		Global: []sluice.Limit{sluice.PerMinute(2).Named("service")},
		Rules: []httplimit.Rule{{Name: "tenants", Key: []string{"header:X-Tenant"}, HeaderFrom: httplimit.HeaderFromAny,
			Cost: &one, Limits: []sluice.Limit{sluice.PerMinute(1).Named("tenant")}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := peer.NewContext(context.Background(), &peer.Peer{Addr: &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 5}})
	ctx = metadata.NewIncomingContext(ctx, metadata.Pairs("x-api-key", "k", "x-tenant", "a"))
	ctx = grpc.NewContextWithServerTransportStream(ctx, nopStream{method: methodHeavy})
	if err := s.Limit(ctx); err != nil {
		t.Fatalf("first call: %v", err)
	}
	var qf *errdetails.QuotaFailure
	for _, d := range status.Convert(s.Limit(ctx)).Details() {
		if d, ok := d.(*errdetails.QuotaFailure); ok {
			qf = d
		}
	}
	want := map[string]*errdetails.QuotaFailure_Violation{
		"tenants.tenant": {Subject: "rule:tenants", Description: "tenants.tenant: 1 per 1m under the tenants rule",
			QuotaDimensions: map[string]string{"rule": "tenants"}},
		"service": {Subject: "global", Description: "service: 2 per 1m for the whole service (this call costs 2 units)"},
	}
	if qf == nil || len(qf.Violations) != len(want) {
		t.Fatalf("QuotaFailure %v, want %d violations", qf, len(want))
	}
	for _, v := range qf.Violations {
		w := want[v.QuotaId]
		if w == nil || v.Subject != w.Subject || v.Description != w.Description {
			t.Errorf("violation of %s: subject %q, description %q; want %q, %q", v.QuotaId, v.Subject, v.Description, w.GetSubject(), w.GetDescription())
		}
		// The metric is what is counted, the dimensions what it is
		// counted per: a global limit's none (google.rpc.QuotaFailure).
		if v.QuotaMetric != "requests" || !maps.Equal(v.QuotaDimensions, w.GetQuotaDimensions()) {
			t.Errorf("violation of %s: metric %q, dimensions %v; want \"requests\", %v", v.QuotaId, v.QuotaMetric, v.QuotaDimensions, w.GetQuotaDimensions())
		}
	}
}

// A client in the penalty box is refused by a peek at the box (a check of
// cost 0): its violation says nothing of what the call costs.
func TestQuotaFailureOfThePenaltyBoxStatesNoCost(t *testing.T) {
	t.Parallel()
	store := memory.New()
	defer store.Close()
	s, err := grpclimit.New(sluice.NewLimiter(store), grpclimit.Options{Limits: httplimit.Options{
		Plans:   []*httplimit.Plan{plan("free", sluice.PerMinute(1))},
		Penalty: httplimit.Penalty{Refusals: 2, Within: time.Minute, For: time.Hour},
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := peer.NewContext(context.Background(), &peer.Peer{Addr: &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 5}})
	ctx = metadata.NewIncomingContext(ctx, metadata.Pairs("x-api-key", "k"))
	ctx = grpc.NewContextWithServerTransportStream(ctx, nopStream{method: methodSay})
	var err4 error
	for range 4 { // admitted, refused twice (boxed), then refused by the box
		err4 = s.Limit(ctx)
	}
	var qf *errdetails.QuotaFailure
	for _, d := range status.Convert(err4).Details() {
		if d, ok := d.(*errdetails.QuotaFailure); ok {
			qf = d
		}
	}
	if qf == nil || len(qf.Violations) != 1 || qf.Violations[0].QuotaId != "penalty" {
		t.Fatalf("QuotaFailure %v, want the penalty box's one violation", qf)
	}
	if d, want := qf.Violations[0].Description, "In the penalty box: every request is refused for 1h."; d != want {
		t.Errorf("description %q, want %q", d, want)
	}
}
