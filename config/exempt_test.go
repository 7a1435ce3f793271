package config_test

import (
	"time"

	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
)

const exemptPlans = `identity: {user_header: X-User}
plans:
  free:
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 5, window: 1m}]
keys:
  - {name: monitoring, sha256: 9f8cfdb17116bf0e2a44e071454f25594cb9b8737bf331e6a2f0b30550572f29}
`

func TestExemptAsAListOrAMapping(t *testing.T) {
	c, err := config.Parse("t.yaml", []byte(exemptPlans+`exempt: ["GET /healthz"]`))
	if err != nil || !slices.Equal(c.HTTPLimitOptions().Exempt, []string{"GET /healthz"}) {
		t.Fatalf("list form: %v %v", c, err)
	}
	c, err = config.Parse("t.yaml", []byte(exemptPlans+`exempt:
  routes: ["GET /healthz"]
  addresses: [10.1.0.0/16, 192.0.2.7]
  keys: [monitoring]
  users: [ops-bot]
  plans: [free]
`))
	if err != nil {
		t.Fatal(err)
	}
	o := c.HTTPLimitOptions()
	if !slices.Equal(o.Exempt, []string{"GET /healthz"}) || !slices.Equal(o.ExemptKeys, []string{"monitoring"}) || !slices.Equal(o.ExemptUsers, []string{"ops-bot"}) ||
		!slices.Equal(o.ExemptPlans, []string{"free"}) ||
		!slices.Equal(o.ExemptAddresses, []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16"), netip.MustParsePrefix("192.0.2.7/32")}) {
		t.Errorf("mapping form: %+v", o)
	}
	_, err = config.Parse("t.yaml", []byte(exemptPlans+`exempt:
  keys: [monitor]
`))
	if want := `t.yaml:8:10: exempt.keys[0]: "monitor" is not the name of a key`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("an unknown key: %v, want %s", err, want)
	}
	_, err = config.Parse("t.yaml", []byte(exemptPlans+`exempt:
  plans: [free, gold]
`))
	if want := `t.yaml:8:17: exempt.plans[1]: "gold" is not a plan (free)`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("an unknown plan: %v, want %s", err, want)
	}
}

func TestResponseTemplate(t *testing.T) {
	c, err := config.Parse("t.yaml", []byte(exemptPlans+"response: {body: error-code, global_status: 503, retry_jitter: 30s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if o := c.HTTPLimitOptions(); o.RefusalTemplate != httplimit.TemplateErrorCode || o.GlobalStatus != 503 || o.RetryJitter != 30*time.Second {
		t.Errorf("body error-code: %q %d %v", o.RefusalTemplate, o.GlobalStatus, o.RetryJitter)
	}
	_, err = config.Parse("t.yaml", []byte(exemptPlans+"response:\n  template: '{\"wait\": \"{{retry}}\"}'\n  global_status: 500\n  retry_jitter: 2h\n"))
	for _, want := range []string{`t.yaml:8:13: response.template: {{retry}} is not a placeholder`, `t.yaml:9:18: response.global_status: 500: a refusal by global limits is 429 or 503`,
		`t.yaml:10:17: response.retry_jitter: 2h0m0s: a jitter is between 0 and 1h0m0s`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want %s", err, want)
		}
	}
}

// The links a client is sent (a 429 body's documentation and upgrade, the
// docs page's) are http or https URLs, refused at their line otherwise.
func TestResponseLinksAreWebURLs(t *testing.T) {
	_, err := config.Parse("t.yaml", []byte(exemptPlans+"response:\n  docs_url: \"javascript:alert(1)\"\n"))
	if want := `t.yaml:8:13: response.docs_url: "javascript:alert(1)" is not an http or https URL`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want %s", err, want)
	}
}

// An exempt prefix of length 0 (0.0.0.0/0, ::/0) is every address of its
// family: it loaded, and no limit applied to any client, which a
// placeholder or a line copied from a firewall's rules does by mistake. It
// is refused at its line; one address and narrower prefixes load.
func TestExemptingEveryAddressIsRefused(t *testing.T) {
	_, err := config.Parse("t.yaml", []byte(exemptPlans+"exempt:\n  addresses: [10.0.0.0/8, 0.0.0.0/0, \"::/0\"]\n"))
	for _, want := range []string{
		`t.yaml:8:27: exempt.addresses[1]: 0.0.0.0/0 is every IPv4 address: no limit would apply to any client that connects over IPv4 (to watch limits without refusing anyone, set shadow: true on them)`,
		`t.yaml:8:38: exempt.addresses[2]: ::/0 is every IPv6 address: no limit would apply to any client that connects over IPv6 (to watch limits without refusing anyone, set shadow: true on them)`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want %s", err, want)
		}
	}
	if errs := config.Errors(err); len(errs) != 2 {
		t.Errorf("%d errors, want 2: %v", len(errs), err)
	}
	_, err = config.Parse("t.yaml", []byte(exemptPlans+"exempt:\n  addresses: [\"::ffff:0:0/96\"]\n"))
	if want := `t.yaml:8:15: exempt.addresses[0]: 0.0.0.0/0 is every IPv4 address`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("IPv4-mapped: got %v, want %s", err, want)
	}
	if _, err := config.Parse("t.yaml", []byte(exemptPlans+"exempt:\n  addresses: [0.0.0.0/1, \"2001:db8::/32\", 192.0.2.7]\n")); err != nil {
		t.Error(err)
	}
}

// An exempt route of every path on every host and method ("/", or
// "/{rest...}"), which ServeMux matches for every request, exempted every
// request: a landing page's route written "/" where "/{$}" is that page
// alone. It is refused at its line; a method's or a host's subtree
// ("OPTIONS /", "internal.example.com/") and the root page load.
func TestExemptingEveryRouteIsRefused(t *testing.T) {
	for _, c := range []struct{ route, want string }{
		{`"/"`, `t.yaml:8:12: exempt.routes[0]: "/" matches every request: no limit would apply to anyone (the root page alone is "/{$}")`},
		{`"/{rest...}"`, `t.yaml:8:12: exempt.routes[0]: "/{rest...}" matches every request: no limit would apply to anyone (the root page alone is "/{$}")`},
	} {
		_, err := config.Parse("t.yaml", []byte(exemptPlans+"exempt:\n  routes: ["+c.route+"]\n"))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %s", c.route, err, c.want)
		}
	}
	for _, route := range []string{`"/{$}"`, `"OPTIONS /"`, `"internal.example.com/"`, `"/api/"`} {
		if _, err := config.Parse("t.yaml", []byte(exemptPlans+"exempt:\n  routes: ["+route+"]\n")); err != nil {
			t.Errorf("%s: %v", route, err)
		}
	}
}
