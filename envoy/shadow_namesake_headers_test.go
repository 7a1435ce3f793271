package envoy_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/httplimit"
)

// The IETF headers name a limit once, with the figures of its descriptor
// closest to refusing, among the limits they may show: a shadow_mode rule
// of the same name as an enforced one, which they never show, takes no
// part, so it cannot hide the enforced limit (here 100 a minute, 97 left,
// beside a shadow rule of 2 a minute, over its limit).
func TestShadowRuleNamedAsAnEnforcedOneHidesNothing(t *testing.T) {
	h := serve(t, `
domain: d
descriptors:
  - key: remote_address
    rate_limit: {name: api, unit: minute, requests_per_unit: 100}
  - key: user
    shadow_mode: true
    rate_limit: {name: api, unit: minute, requests_per_unit: 2}
`, envoy.Options{Headers: httplimit.ModeIETF})
	ip, user := desc("remote_address", "1.2.3.4"), desc("user", "u")
	var got string
	for range 3 {
		got = headerText(h.ask(request("d", 0, ip, user)).ResponseHeadersToAdd)
	}
	if !strings.Contains(got, `"api";q=100;w=60`) || !strings.Contains(got, `"api";r=97`) {
		t.Errorf("enforced limit api (100/min, 97 left) not told; headers:\n%s", got)
	}
}
