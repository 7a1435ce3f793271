package envoy_test

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/sluice-dev/sluice/envoy"
)

// A domain is bounded as a descriptor is: a request whose domain is longer
// than MaxDomainBytes is InvalidArgument, before any rule or store sees
// it (whatever observes the service, which is told the domain, holds no
// more), and a rules file cannot define a domain no request could name.
func TestDomainsAreBounded(t *testing.T) {
	h := serve(t, apiRules)
	long := strings.Repeat("d", envoy.MaxDomainBytes+1)
	_, err := h.client.ShouldRateLimit(context.Background(), request(long, 0, desc("client", "c")))
	if st, _ := grpcstatus.FromError(err); st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), "domain of 1025 bytes, more than 1024") {
		t.Errorf("a domain of %d bytes: %v, want InvalidArgument", len(long), err)
	}
	h.expect(h.ask(request(long[:envoy.MaxDomainBytes], 0, desc("client", "c"))), ok, status{code: ok})

	_, err = envoy.LoadRules("r.yaml", []byte("domain: "+long+"\ndescriptors:\n  - key: k\n    rate_limit: {unit: second, requests_per_unit: 1}\n"))
	if err == nil || !strings.Contains(err.Error(), "r.yaml:1:9: domain: 1025 bytes, more than 1024: no request could name it") {
		t.Errorf("a rules file's domain of 1025 bytes: %v", err)
	}
}
