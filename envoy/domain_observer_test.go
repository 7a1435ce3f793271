package envoy_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/envoy"
)

// An observer is told a request's domain, as it logs or labels it, also
// when the request is refused for a domain longer than MaxDomainBytes: it
// is then told the first MaxDomainBytes bytes of it, not the megabyte a
// request may carry.
func TestObserversAreToldABoundedDomain(t *testing.T) {
	var mu sync.Mutex
	var domains []string
	h := serve(t, apiRules, envoy.Options{Observer: func(res *envoy.Result, _ time.Duration, _ error) {
		mu.Lock()
		defer mu.Unlock()
		domains = append(domains, strings.Clone(res.Domain))
	}})
	long := strings.Repeat("d", 64<<10)
	h.client.ShouldRateLimit(context.Background(), request(long, 0, desc("client", "c")))
	h.ask(request("api", 0, desc("client", "c")))
	mu.Lock()
	defer mu.Unlock()
	if len(domains) != 2 || domains[0] != long[:envoy.MaxDomainBytes] || domains[1] != "api" {
		lens := make([]int, len(domains))
		for i, d := range domains {
			lens[i] = len(d)
		}
		t.Errorf("observers were told domains of %v bytes, want %d and 3", lens, envoy.MaxDomainBytes)
	}
}
