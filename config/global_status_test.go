package config_test

import (
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// response.global_status is judged once, by httplimit's rule (429 or 503),
// in its words: the decoder's own range [400, 599] refused 200 as out of a
// range that 404 is in, and 404 was then refused as not 429 or 503. A 0,
// which the middleware reads as the default, is refused where it is
// written.
func TestGlobalStatusIsJudgedOnce(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	for _, c := range []struct{ status, want string }{
		{"200", `g.yaml:3:27: response.global_status: 200: a refusal by global limits is 429 or 503`},
		{"404", `g.yaml:3:27: response.global_status: 404: a refusal by global limits is 429 or 503`},
		{"99999", `g.yaml:3:27: response.global_status: 99999: a refusal by global limits is 429 or 503`},
		{"0", `g.yaml:3:27: response.global_status: 0: a refusal by global limits is 429 or 503 (leave global_status out for 429)`},
	} {
		_, err := config.Parse("g.yaml", []byte(plans+"response: {global_status: "+c.status+"}\n"))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n%v\nwant exactly:\n%s", c.status, err, c.want)
		}
	}
	for _, ok := range []string{"429", "503"} {
		if _, err := config.Parse("g.yaml", []byte(plans+"response: {global_status: "+ok+"}\n")); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}
