package envoy_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

func headerText(hs []*corev3.HeaderValue) string {
	var b strings.Builder
	for _, h := range hs {
		b.WriteString(h.GetKey() + ": " + h.GetValue() + "\n")
	}
	return b.String()
}

const headerRules = edgeRules + `
  - key: tenant
    shadow_mode: true
    rate_limit: {name: per-tenant, unit: second, requests_per_unit: 1}
`

func TestIETFHeadersListEveryEnforcedLimit(t *testing.T) {
	h := serve(t, headerRules, envoy.Options{Headers: httplimit.ModeIETF})
	ip, login := desc("remote_address", "1.2.3.4"), desc("remote_address", "1.2.3.4", "path", "/login")
	tenant := desc("tenant", "t")
	h.clock.Advance(42*time.Second + time.Millisecond)

	got := headerText(h.ask(request("edge", 0, ip, login, tenant, ip)).ResponseHeadersToAdd)
	want := `RateLimit-Policy: "per-ip";q=10;w=60, "login";q=2;w=60
RateLimit: "per-ip";r=8;t=18, "login";r=1;t=18
`
	if got != want {
		t.Errorf("allowed request: headers\n%s\nwant\n%s", got, want)
	}
	h.ask(request("edge", 0, login))
	got = headerText(h.ask(request("edge", 0, ip, login)).ResponseHeadersToAdd)
	want = `RateLimit-Policy: "per-ip";q=10;w=60, "login";q=2;w=60
RateLimit: "per-ip";r=8;t=18, "login";r=0;t=18
Retry-After: 18
`
	if got != want {
		t.Errorf("refused request: headers\n%s\nwant\n%s", got, want)
	}
	if got := h.ask(request("edge", 0, tenant, desc("nothing", "x"))).ResponseHeadersToAdd; len(got) != 0 {
		t.Errorf("shadow and unmatched descriptors only: headers %s", headerText(got))
	}
}

func TestDraft6HeadersDescribeTheLimitClosestToRefusing(t *testing.T) {
	h := serve(t, headerRules, envoy.Options{Headers: httplimit.ModeDraft6})
	ip, login := desc("remote_address", "1.2.3.4"), desc("remote_address", "1.2.3.4", "path", "/login")
	got := headerText(h.ask(request("edge", 0, ip, login)).ResponseHeadersToAdd)
	want := "RateLimit-Limit: 2\nRateLimit-Remaining: 1\nRateLimit-Reset: 60\nRateLimit-Policy: 2;w=60\n"
	if got != want {
		t.Errorf("headers\n%s\nwant\n%s", got, want)
	}
}

// envoyproxy/ratelimit's headers (LIMIT_RESPONSE_HEADERS_ENABLED;
// shouldRateLimitWorker in src/service/ratelimit.go) describe the status
// with the least limit_remaining, the first of equals, among those with a
// current_limit (shadow, quota-mode and requests_per_unit 0 ones included),
// or, when one is OVER_LIMIT, the last one that is; draft-6 describes the
// same, wherever its limit is in the request.
func TestDraft6HeadersDescribeTheStatusRatelimitWould(t *testing.T) {
	h := serve(t, `
domain: d
descriptors:
  - key: m
    rate_limit: {unit: minute, requests_per_unit: 1}
  - key: h
    rate_limit: {unit: hour, requests_per_unit: 1}
  - key: m5
    rate_limit: {unit: minute, requests_per_unit: 5}
  - key: h5
    rate_limit: {unit: hour, requests_per_unit: 5}
  - key: blk
    rate_limit: {unit: minute, requests_per_unit: 0}
  - key: shadow
    shadow_mode: true
    rate_limit: {unit: second, requests_per_unit: 1}
`, envoy.Options{Headers: httplimit.ModeDraft6})
	h.ask(request("d", 0, desc("m", "1"), desc("h", "1")))
	minute := "RateLimit-Limit: 1\nRateLimit-Remaining: 0\nRateLimit-Reset: 60\nRateLimit-Policy: 1;w=60\nRetry-After: 3600\n"
	hour := "RateLimit-Limit: 1\nRateLimit-Remaining: 0\nRateLimit-Reset: 3600\nRateLimit-Policy: 1;w=3600\nRetry-After: 3600\n"
	for _, c := range []struct {
		name string
		req  *rlsv3.RateLimitRequest
		code rlsv3.RateLimitResponse_Code
		want string
	}{
		{"two over: the last (m, h)", request("d", 0, desc("m", "1"), desc("h", "1")), over, hour},
		{"two over: the last (h, m)", request("d", 0, desc("h", "1"), desc("m", "1")), over, minute},
		{"a tie: the first (m5, h5)", request("d", 0, desc("m5", "1"), desc("h5", "1")), ok,
			"RateLimit-Limit: 5\nRateLimit-Remaining: 4\nRateLimit-Reset: 60\nRateLimit-Policy: 5;w=60\n"},
		{"a tie: the first (h5, m5)", request("d", 0, desc("h5", "2"), desc("m5", "2")), ok,
			"RateLimit-Limit: 5\nRateLimit-Remaining: 4\nRateLimit-Reset: 3600\nRateLimit-Policy: 5;w=3600\n"},
		{"a requests_per_unit 0 rule hit", request("d", 0, desc("m5", "3"), desc("blk", "x")), over,
			"RateLimit-Limit: 0\nRateLimit-Remaining: 0\nRateLimit-Reset: 60\nRateLimit-Policy: 0;w=60\n"},
		{"a shadow limit at its last unit", request("d", 0, desc("m5", "4"), desc("shadow", "s")), ok,
			"RateLimit-Limit: 1\nRateLimit-Remaining: 0\nRateLimit-Reset: 1\nRateLimit-Policy: 1;w=1\n"},
		{"a shadow limit over", request("d", 0, desc("m5", "4"), desc("shadow", "s")), ok,
			"RateLimit-Limit: 1\nRateLimit-Remaining: 0\nRateLimit-Reset: 1\nRateLimit-Policy: 1;w=1\n"},
	} {
		resp := h.ask(c.req)
		if got := headerText(resp.ResponseHeadersToAdd); resp.OverallCode != c.code || got != c.want {
			t.Errorf("%s: %v, headers\n%s\nwant %v with\n%s", c.name, resp.OverallCode, got, c.code, c.want)
		}
	}
}

func TestNoRetryAfterWhenNoWaitHelps(t *testing.T) {
	h := serve(t, headerRules+`
  - key: remote_address
    value: 198.51.100.66
    rate_limit: {unit: second, requests_per_unit: 0}
`, envoy.Options{Headers: httplimit.ModeIETF})
	cases := []struct {
		name string
		req  *rlsv3.RateLimitRequest
	}{
		{"blocked address", request("edge", 0, desc("remote_address", "198.51.100.66"))},
		{"cost above the limit's size", request("edge", 11, desc("remote_address", "1.2.3.4"))},
	}
	for _, c := range cases {
		resp := h.ask(c.req)
		if got := headerText(resp.ResponseHeadersToAdd); resp.OverallCode != over || strings.Contains(got, "Retry-After") {
			t.Errorf("%s: %v with headers\n%s", c.name, resp.OverallCode, got)
		}
	}
}

// Header modes are accepted in any case, the zero mode is the default
// (ietf), and a refusal names the field.
func TestHeaderModeIsValidated(t *testing.T) {
	lim := sluice.NewLimiter(memory.New(memory.WithSweepInterval(0)))
	for _, mode := range []string{httplimit.ModeIETF, httplimit.ModeDraft6, "none", "", "IETF", "Draft-6"} {
		if _, err := envoy.NewService(lim, nil, envoy.Options{Headers: mode}); err != nil {
			t.Errorf("mode %q: %v", mode, err)
		}
	}
	for _, mode := range []string{httplimit.ModeDraft7, httplimit.ModeLegacy, "ietf "} {
		_, err := envoy.NewService(lim, nil, envoy.Options{Headers: mode})
		var fe *envoy.FieldError
		if !errors.As(err, &fe) || fe.Field != "Headers" || !strings.HasPrefix(err.Error(), "envoy: Options.Headers: ") {
			t.Errorf("mode %q: error %v, want a *FieldError of Headers", mode, err)
		}
	}
	if _, err := envoy.NewService(nil, nil, envoy.Options{}); err == nil {
		t.Error("nil limiter accepted")
	}
}

// The zero Options sends the ietf headers; "none" sends none.
func TestZeroOptionsSendIETFHeaders(t *testing.T) {
	for mode, want := range map[string]bool{"": true, "none": false} {
		h := serve(t, headerRules, envoy.Options{Headers: mode})
		got := headerText(h.ask(request("edge", 0, desc("remote_address", "1.2.3.4"))).ResponseHeadersToAdd)
		if sent := strings.Contains(got, "RateLimit: "); sent != want {
			t.Errorf("Headers %q: headers %q", mode, got)
		}
	}
}

// A bucket's headers say what httplimit's say: its burst as the quota q,
// the time an emptied bucket takes to refill as w, and as t the time to
// the next unit (not to a full bucket), in both header modes.
func TestBucketHeadersStateItsBurst(t *testing.T) {
	rules := headerRules + `
  - key: bucket
    rate_limit: {name: per-bucket, unit: minute, requests_per_unit: 60, algorithm: token-bucket, burst: 5}
`
	b := desc("bucket", "b")
	h := serve(t, rules, envoy.Options{Headers: httplimit.ModeIETF})
	h.ask(request("edge", 0, b))
	h.ask(request("edge", 0, b))
	got := headerText(h.ask(request("edge", 0, b)).ResponseHeadersToAdd)
	want := `RateLimit-Policy: "per-bucket";q=5;w=5
RateLimit: "per-bucket";r=2;t=1
`
	if got != want {
		t.Errorf("IETF: headers\n%s\nwant\n%s", got, want)
	}
	h = serve(t, rules, envoy.Options{Headers: httplimit.ModeDraft6})
	h.ask(request("edge", 0, b))
	h.ask(request("edge", 0, b))
	got = headerText(h.ask(request("edge", 0, b)).ResponseHeadersToAdd)
	want = "RateLimit-Limit: 5\nRateLimit-Remaining: 2\nRateLimit-Reset: 1\nRateLimit-Policy: 5;w=5\n"
	if got != want {
		t.Errorf("draft-6: headers\n%s\nwant\n%s", got, want)
	}
}

// A request whose cost exceeds a bucket's burst is refused with no wait
// that helps: its headers say nothing remains (limit_remaining 0, as
// envoyproxy/ratelimit answers an OVER_LIMIT descriptor) and so must not
// say that more is available at once (t=0), which a client honouring them
// takes as leave to send the request again now, and again.
func TestACostAboveTheBurstNeverSaysMoreIsAvailableNow(t *testing.T) {
	rules := headerRules + `
  - key: bucket
    rate_limit: {name: per-bucket, unit: minute, requests_per_unit: 60, algorithm: token-bucket, burst: 5}
`
	b := desc("bucket", "b")
	h := serve(t, rules, envoy.Options{Headers: httplimit.ModeIETF})
	resp := h.ask(request("edge", 6, b))
	got := headerText(resp.ResponseHeadersToAdd)
	want := `RateLimit-Policy: "per-bucket";q=5;w=5
RateLimit: "per-bucket";r=0;t=5
`
	if resp.OverallCode != over || got != want {
		t.Errorf("IETF: %v with headers\n%s\nwant\n%s", resp.OverallCode, got, want)
	}
	h = serve(t, rules, envoy.Options{Headers: httplimit.ModeDraft6})
	got = headerText(h.ask(request("edge", 6, b)).ResponseHeadersToAdd)
	want = "RateLimit-Limit: 5\nRateLimit-Remaining: 0\nRateLimit-Reset: 5\nRateLimit-Policy: 5;w=5\n"
	if got != want {
		t.Errorf("draft-6: headers\n%s\nwant\n%s", got, want)
	}
}

// Two descriptors that one rule limits under different values (two
// addresses of one request) are one policy to the client: the IETF
// headers name it once, with the figures of the descriptor closest to
// refusing, as a client reading a name twice could keep either.
func TestOneRuleIsNamedOnceInTheIETFHeaders(t *testing.T) {
	h := serve(t, headerRules, envoy.Options{Headers: httplimit.ModeIETF})
	a, b := desc("remote_address", "1.2.3.4"), desc("remote_address", "5.6.7.8")
	h.clock.Advance(42*time.Second + time.Millisecond)
	for range 3 {
		h.ask(request("edge", 0, b))
	}
	got := headerText(h.ask(request("edge", 0, a, b)).ResponseHeadersToAdd)
	want := `RateLimit-Policy: "per-ip";q=10;w=60
RateLimit: "per-ip";r=6;t=18
`
	if got != want {
		t.Errorf("headers\n%s\nwant\n%s", got, want)
	}
}
