package client_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/client"
)

const apiPlan = `
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 3, window: 1m}
    costs: {"POST /api/generate": 2}
`

func newAPIClient(t *testing.T) (*client.Client, *sluiceServer) {
	srv := newSluiceServer(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), apiPlan)
	srv.store.standStill()
	wire := newWire(t)
	return client.New(srv.admin.URL+"/", client.WithToken(apiToken), client.WithHTTPClient(&http.Client{Transport: wire})), srv
}

func TestCheckDecides(t *testing.T) {
	t.Parallel()
	c, _ := newAPIClient(t)
	ctx := context.Background()
	d, err := c.Check(ctx, client.CheckRequest{User: "u1", Method: "POST", Path: "/api/generate"})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Allowed || d.Identity != "user" || d.Plan != "free" || d.Cost != 2 || d.Limit != "per-minute" ||
		d.Remaining != 1 || d.ResetAfterMs <= 0 || d.Wait() != 0 || len(d.Limits) != 1 ||
		d.Limits[0].Quantity != 3 || d.Limits[0].Window != "1m" || d.Limits[0].Algorithm != "fixed-window" ||
		!strings.HasPrefix(d.Headers["Ratelimit"], `"per-minute";r=1;t=`) {
		t.Errorf("admitted decision %+v", d)
	}
	cost := int64(2)
	d, err = c.Check(ctx, client.CheckRequest{User: "u1", Cost: &cost})
	if err != nil {
		t.Fatal(err)
	}
	if d.Allowed || d.RetryAfter < 1 || d.RetryAfterMs <= 0 || d.Wait() != time.Duration(d.RetryAfterMs)*time.Millisecond ||
		len(d.Violated) != 1 || d.Violated[0] != "per-minute" {
		t.Errorf("refused decision %+v", d)
	}
	cost = 4
	d, err = c.Check(ctx, client.CheckRequest{User: "u2", Cost: &cost})
	if err != nil || d.Allowed || d.Wait() != sluice.Never {
		t.Errorf("a cost above the burst: %+v, %v", d, err)
	}
}

func TestCheckErrors(t *testing.T) {
	t.Parallel()
	c, srv := newAPIClient(t)
	ctx := context.Background()

	_, err := c.Check(ctx, client.CheckRequest{Path: "/x"})
	var apiErr *client.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || !strings.Contains(apiErr.Detail, "exactly one of subject, api_key, token, user or ip") ||
		!errors.Is(err, sluice.ErrInvalidCheck) || errors.Is(err, sluice.ErrStoreUnavailable) {
		t.Errorf("no identity: %v", err)
	}
	_, err = c.Check(ctx, client.CheckRequest{User: "u", Plan: "gold"})
	if !errors.As(err, &apiErr) || !strings.Contains(apiErr.Detail, `unknown plan "gold"`) {
		t.Errorf("unknown plan: %v", err)
	}

	srv.store.fail.Store(true)
	_, err = c.Check(ctx, client.CheckRequest{User: "u"})
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 503 || !errors.Is(err, sluice.ErrStoreUnavailable) {
		t.Errorf("store down: %v", err)
	}
	srv.store.fail.Store(false)

	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := "http://" + ln.Addr().String()
	ln.Close()
	_, err = client.New(dead).Check(ctx, client.CheckRequest{User: "u"})
	if !errors.Is(err, sluice.ErrStoreUnavailable) {
		t.Errorf("server unreachable: %v", err)
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = c.Check(cancelled, client.CheckRequest{User: "u"})
	if !errors.Is(err, context.Canceled) || errors.Is(err, sluice.ErrStoreUnavailable) {
		t.Errorf("cancelled: %v", err)
	}

	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "<html>bad gateway</html>", http.StatusBadGateway)
	}))
	defer html.Close()
	_, err = client.New(html.URL).Check(ctx, client.CheckRequest{User: "u"})
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 502 || apiErr.Detail != "<html>bad gateway</html>" ||
		!errors.Is(err, sluice.ErrStoreUnavailable) {
		t.Errorf("a proxy's 502: %v", err)
	}
	garbled := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("{")) }))
	defer garbled.Close()
	if _, err = client.New(garbled.URL).Check(ctx, client.CheckRequest{User: "u"}); !errors.Is(err, sluice.ErrStoreUnavailable) {
		t.Errorf("a garbled 200: %v", err)
	}
}

// When the decision API cannot decide, a Transport with an APIGate fails
// the call, or sends it anyway with FailOpen.
func TestAPIGateWhenTheServerCannotDecide(t *testing.T) {
	t.Parallel()
	c, srv := newAPIClient(t)
	srv.store.fail.Store(true)
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(other.Close)
	wire := newWire(t)
	gate := c.Gate(client.CheckRequest{Subject: "export"})
	_, err := (&http.Client{Transport: &client.Transport{Base: wire, Gate: gate}}).Get(other.URL)
	if !errors.Is(err, sluice.ErrStoreUnavailable) || wire.sent.Load() != 0 {
		t.Errorf("fail closed: %v, %d sent", err, wire.sent.Load())
	}
	resp, err := (&http.Client{Transport: &client.Transport{Base: wire, Gate: gate, FailOpen: true}}).Get(other.URL)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("fail open: %v", err)
	}
	resp.Body.Close()
}

// WithHTTPClient(nil) keeps the default http.Client, as no option would,
// rather than making a Client that has no server.
func TestWithHTTPClientNilKeepsTheDefault(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"allowed":true,"identity":"external","cost":1,"remaining":4,"resetAfterMs":1000}`))
	}))
	defer srv.Close()
	d, err := client.New(srv.URL, client.WithHTTPClient(nil)).Check(context.Background(), client.CheckRequest{Subject: "s"})
	if err != nil || !d.Allowed || d.Remaining != 4 {
		t.Fatalf("%+v, %v", d, err)
	}
}

func TestSettleSendsHeadersWhateverTheCaseOfTheirNames(t *testing.T) {
	t.Parallel()
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := new(strings.Builder)
		_, _ = io.Copy(b, r.Body)
		got = b.String()
		w.Write([]byte(`{"settled":true}`))
	}))
	t.Cleanup(srv.Close)
	c := client.New(srv.URL)
	// A header made by hand, as from gRPC metadata, with names in lower case.
	if err := c.Settle(context.Background(), "id", http.StatusOK, http.Header{"x-usage-tokens": {"12"}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, `"x-usage-tokens":"12"`) {
		t.Errorf("body %s, want the header's value", got)
	}
}
