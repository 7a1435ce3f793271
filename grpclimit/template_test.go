package grpclimit_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/status"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/grpclimit"
	"github.com/sluice-dev/sluice/httplimit"
)

// Limits.RefusalTemplate shapes an HTTP refusal's body, which a gRPC call
// has none of: a refusal is the same status, with the same message,
// RetryInfo and Help, whether the Limits have a template or not.
func TestARefusalTemplateDoesNotChangeTheGRPCRefusal(t *testing.T) {
	t.Parallel()
	free := plan("free", sluice.PerMinute(1))
	free.Upgrade = &httplimit.Upgrade{Plan: "pro", URL: "https://example.com/pricing"}
	ts := start(t, grpclimit.Options{Limits: httplimit.Options{Plans: []*httplimit.Plan{free, plan("pro", sluice.PerMinute(100))},
		RefusalTemplate: `{"code": "SLOW_DOWN", "wait": "{{retryAfter}}"}`}})
	ctx := context.Background()
	if _, err := say(ctx, ts.conn, methodSay, "x-api-key", "k"); err != nil {
		t.Fatal(err)
	}
	_, err := say(ctx, ts.conn, methodSay, "x-api-key", "k")
	ri, qf, help := details(t, err)
	if ri == nil || ri.GetRetryDelay().AsDuration() <= 59*time.Second || ri.GetRetryDelay().AsDuration() > time.Minute {
		t.Errorf("RetryInfo %v, want the minute's wait", ri)
	}
	if qf == nil || len(qf.Violations) != 1 {
		t.Errorf("QuotaFailure %v", qf)
	}
	if help == nil || len(help.Links) != 1 {
		t.Errorf("Help %v, want the upgrade", help)
	}
	if msg := status.Convert(err).Message(); !strings.HasPrefix(msg, "Rate limit exceeded: 1 request per minute on the free plan.") {
		t.Errorf("message %q", msg)
	}
}
