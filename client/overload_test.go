package client_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sluice-dev/sluice/client"
)

// A server of partitioned quotas that sheds load answers 503 with
// Retry-After, as sluice's degradation does: the whole server is short of
// capacity, not one tenant's quota. Every partition of the host waits it
// out, one the Transport had not met yet included; a 429's Retry-After
// holds only its partition.
func TestA503sRetryAfterHoldsEveryPartitionOfItsHost(t *testing.T) {
	for _, c := range []struct {
		status     int
		holdsOther bool
	}{
		{http.StatusServiceUnavailable, true},
		{http.StatusTooManyRequests, false},
	} {
		var refused atomic.Bool
		srv := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			status := http.StatusOK
			h := http.Header{}
			if r.Header.Get("X-Tenant") == "a" && refused.CompareAndSwap(false, true) {
				status = c.status
				h.Set("Retry-After", "30")
			}
			return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
		})
		tr := &client.Transport{Base: srv, Partition: func(r *http.Request) string { return r.Header.Get("X-Tenant") }}
		if err := forTenant(tr, "b"); err != nil {
			t.Fatal(err)
		}
		if err := forTenant(tr, "a"); err != nil {
			t.Fatal(err)
		}
		for _, other := range []string{"b", "c"} {
			if err := forTenant(tr, other); errors.Is(err, client.ErrWaitTooLong) != c.holdsOther {
				t.Errorf("after a %d with Retry-After to tenant a, tenant %s: %v; want it held: %v", c.status, other, err, c.holdsOther)
			}
		}
		if err := forTenant(tr, "a"); !errors.Is(err, client.ErrWaitTooLong) {
			t.Errorf("after a %d with Retry-After to tenant a, tenant a again: %v; want it held", c.status, err)
		}
	}
}
