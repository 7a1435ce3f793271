package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/client"
)

// tenants is a server that allocates its quota per tenant (the draft's
// partition key, pk): the tenant "spent" has none of it left for an hour,
// the others all of it.
var tenants = roundTripFunc(func(r *http.Request) (*http.Response, error) {
	h := http.Header{}
	h.Set("RateLimit-Policy", `"per-tenant";q=100;w=3600`)
	if r.Header.Get("X-Tenant") == "spent" {
		h.Set("RateLimit", `"per-tenant";r=0;t=3600;pk=:c3BlbnQ=:`)
	} else {
		h.Set("RateLimit", `"per-tenant";r=99;t=3600;pk=:ZnJlc2g=:`)
	}
	return &http.Response{StatusCode: http.StatusOK, Header: h, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
})

func forTenant(tr http.RoundTripper, tenant string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.example/items", nil)
	req.Header.Set("X-Tenant", tenant)
	resp, err := tr.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
	}
	return err
}

// A Transport reads no partition key: requests to one host are one quota
// unless Partition says which partition each spends. With it, a tenant
// whose quota is spent does not hold the others' requests; without it,
// the spent tenant's answer holds them all.
func TestPartitionsOfAHostAreLearnedApart(t *testing.T) {
	mixed := &client.Transport{Base: tenants}
	if err := forTenant(mixed, "spent"); err != nil {
		t.Fatal(err)
	}
	if err := forTenant(mixed, "fresh"); !errors.Is(err, client.ErrWaitTooLong) {
		t.Errorf("without Partition, another tenant after a spent one: %v; want it held (one quota)", err)
	}

	apart := &client.Transport{Base: tenants, Partition: func(r *http.Request) string { return r.Header.Get("X-Tenant") }}
	if err := forTenant(apart, "spent"); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := forTenant(apart, "fresh"); err != nil {
			t.Fatalf("with Partition, request %d of a tenant with its quota whole: %v; want it sent", i+1, err)
		}
	}
	if err := forTenant(apart, "spent"); !errors.Is(err, client.ErrWaitTooLong) {
		t.Errorf("with Partition, the spent tenant again: %v; want it held for its reset", err)
	}
}
