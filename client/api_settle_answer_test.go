package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/client"
)

// Settle succeeds only on the server's answer of a settlement, 200
// {"settled":true} (docs/api.md), as Check succeeds only on a decision: a
// 200 from something else (a proxy's HTML page, a health endpoint's
// {"status":"ok"}) settled nothing, and is an error wrapping
// sluice.ErrStoreUnavailable.
func TestSettleSucceedsOnlyOnTheServersSettlement(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		body string
		ok   bool
	}{
		"settled":             {`{"settled":true}` + "\n", true},
		"an HTML page":        {"<html><body>Welcome</body></html>", false},
		"some other JSON":     {`{"status":"ok"}`, false},
		"settled false":       {`{"settled":false}`, false},
		"a decision, not one": {`{"allowed":true,"identity":"external","cost":1,"remaining":1}`, false},
		"empty":               {"", false},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			err := client.New(srv.URL).Settle(context.Background(), "id", 200, nil)
			if tc.ok && err != nil {
				t.Errorf("Settle answered 200 %q: %v; want settled", tc.body, err)
			}
			if !tc.ok && !errors.Is(err, sluice.ErrStoreUnavailable) {
				t.Errorf("Settle answered 200 %q: %v; want an error wrapping ErrStoreUnavailable (nothing was settled)", tc.body, err)
			}
		})
	}
}

// The server answers a settlement 503 in two cases a caller must tell
// apart: the store could not tell whether a signed id was settled (the id
// is not spent: retry after Retry-After, 1 s), and the store failed the
// refund (the id is spent: no Retry-After, and a retry is a 404). The
// *APIError carries the answer's Retry-After, 0 when it has none.
func TestSettlesAPIErrorCarriesTheRetryAfterOfA503(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		retryAfter string
		want       time.Duration
	}{
		"the store cannot tell: retry": {"1", time.Second},
		"the refund failed: spent":     {"", 0},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.retryAfter != "" {
					w.Header().Set("Retry-After", tc.retryAfter)
				}
				w.Header().Set("Content-Type", "application/problem+json")
				w.WriteHeader(http.StatusServiceUnavailable)
				w.Write([]byte(`{"title":"Service Unavailable","status":503,"detail":"settle: …"}`))
			}))
			defer srv.Close()
			err := client.New(srv.URL).Settle(context.Background(), "id", 200, nil)
			var apiErr *client.APIError
			if !errors.As(err, &apiErr) || apiErr.StatusCode != 503 || apiErr.RetryAfter != tc.want {
				t.Errorf("Settle answered 503 with Retry-After %q: %#v; want an *APIError of status 503 and RetryAfter %v", tc.retryAfter, err, tc.want)
			}
		})
	}
}
