package grpclimit_test

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/grpclimit"
	"github.com/sluice-dev/sluice/httplimit"
)

// A call's metadata reach every part of the limits that reads headers, not
// only identity's: a rule keyed by a header counts each tenant apart, a
// rule that requires a header applies to the calls carrying it, and the
// call's :authority is the request's host.
func TestRulesReadTheCallsMetadata(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	roomy := plan("free", sluice.PerMinute(100))
	one := []sluice.Limit{sluice.PerMinute(1)}

	byTenant := start(t, grpclimit.Options{Limits: httplimit.Options{Plans: []*httplimit.Plan{roomy},
		Rules: []httplimit.Rule{{Name: "tenants", Key: []string{"header:X-Tenant"}, HeaderFrom: httplimit.HeaderFromAny, Limits: one}}}})
	for _, tenant := range []string{"a", "b"} {
		if _, err := say(ctx, byTenant.conn, methodSay, "x-tenant", tenant); err != nil {
			t.Errorf("tenant %s's first call: %v", tenant, err)
		}
	}
	if _, err := say(ctx, byTenant.conn, methodSay, "x-tenant", "a"); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("tenant a's second call: %v, want RESOURCE_EXHAUSTED", err)
	}

	beta := start(t, grpclimit.Options{Limits: httplimit.Options{Plans: []*httplimit.Plan{roomy},
		Rules: []httplimit.Rule{{Name: "beta", Headers: []httplimit.HeaderMatch{{Name: "X-Beta", Value: "1"}}, Limits: one}}}})
	for i := range 2 {
		if _, err := say(ctx, beta.conn, methodSay); err != nil {
			t.Errorf("call %d without x-beta: %v", i, err)
		}
	}
	say(ctx, beta.conn, methodSay, "x-beta", "1")
	if _, err := say(ctx, beta.conn, methodSay, "x-beta", "1"); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("second call with x-beta: %v, want RESOURCE_EXHAUSTED", err)
	}

	byHost := start(t, grpclimit.Options{Limits: httplimit.Options{Plans: []*httplimit.Plan{roomy},
		Rules: []httplimit.Rule{{Name: "hosts", Key: []string{"host"}, Fallback: httplimit.FallbackSkip, Limits: one}}}})
	say(ctx, byHost.conn, methodSay)
	if _, err := say(ctx, byHost.conn, methodSay); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("second call to the host: %v, want RESOURCE_EXHAUSTED (no host: the rule skipped)", err)
	}
}
