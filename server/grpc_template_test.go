package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	grpcstatus "google.golang.org/grpc/status"
)

// response.template shapes the JSON body of an HTTP refusal; a gRPC call
// has no body to shape. Its refusal through the proxy is the same status,
// message and details with a template configured as without one.
func TestARefusalTemplateDoesNotChangeAGRPCRefusal(t *testing.T) {
	cfg := strings.Replace(grpcConfig, `response: {docs_url: "https://example.com/docs/rate-limits"}`,
		`response: {docs_url: "https://example.com/docs/rate-limits", template: '{"code": "SLOW_DOWN", "wait": "{{retryAfter}}"}'}`, 1)
	if cfg == grpcConfig {
		t.Fatal("grpcConfig no longer has the response line this test extends")
	}
	_, addrs := grpcBehindSluiceWith(t, cfg)
	client := healthpb.NewHealthClient(dialInsecure(t, addrs.public))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var err error
	for range 4 {
		if _, err = client.Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
			break
		}
	}
	st, _ := grpcstatus.FromError(err)
	if st.Code() != codes.ResourceExhausted {
		t.Fatalf("the fourth call: %v, want ResourceExhausted", err)
	}
	retry, qf, help := detailsOf(st)
	if retry == nil || qf == nil || len(qf.Violations) != 1 || qf.Violations[0].QuotaId != "per-minute" || help == nil {
		t.Errorf("refusal with a template: RetryInfo %v, QuotaFailure %v, Help %v; want all three as without a template", retry, qf, help)
	}
	if !strings.Contains(st.Message(), "per-minute") && !strings.Contains(st.Message(), "3 requests per minute") {
		t.Errorf("refusal with a template: message %q, want the problem's detail", st.Message())
	}
}
