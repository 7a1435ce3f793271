package config_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// An empty list whose empty value is read as a default that says the
// opposite is refused at its line, as for api_key_headers
// (TestAnEmptyListThatReadsAsTheDefaultIsRefused): identity.jwt.audiences:
// [] would check no aud (a templated list rendered empty would accept tokens
// the issuer minted for any other API), algorithms: [] would accept every
// asymmetric one, notify.at: [] would notify at 100%.
func TestAnEmptyJWTOrNotifyListIsRefused(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: m, algorithm: fixed-window, quantity: 10, window: 1m}]}\n"
	for _, y := range []string{
		"identity: {jwt: {jwks_url: \"https://a.example/k\", issuer: \"https://a.example/\", audiences: []}}\n",
		"identity: {jwt: {jwks_url: \"https://a.example/k\", algorithms: []}}\n",
		"notify: {url: \"https://b.example/hook\", limits: [m], at: []}\n",
	} {
		c, err := config.Parse("e.yaml", []byte(plans+y))
		if err != nil && !strings.Contains(err.Error(), "an empty list is read as the default") {
			t.Errorf("%s  refused for another reason: %v", y, err)
		}
		if err == nil {
			detail := ""
			if len(c.Identity.JWT) > 0 {
				o := c.Identity.JWT[0].Options()
				detail = "audiences " + fmtList(o.Audiences) + ", algorithms " + fmtList(o.Algorithms)
			} else {
				detail = "notify.at " + fmtInts(c.Notify.At)
			}
			t.Errorf("%s  loaded (%s); want it refused at the empty list, which is read as the opposite default", y, detail)
		}
	}
}

func fmtList(s []string) string {
	if len(s) == 0 {
		return "[] (the default)"
	}
	return fmt.Sprint(s)
}

func fmtInts(s []int) string { return fmt.Sprint(s) }
