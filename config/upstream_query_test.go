package config_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// A query in upstream: would be added to every proxied request (the
// reverse proxy merges it into each request's own): it is refused at its
// line, as credentials and a fragment are. A path is kept: it prefixes
// every request's path.
func TestUpstreamWithAQueryIsRefused(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: hourly, algorithm: gcra, quantity: 10, window: 1h}]}\n"
	for _, u := range []string{"http://api.internal/?tenant=acme", "https://api.internal/v1?key=s3cret"} {
		_, err := config.Parse("t.yaml", []byte("upstream: "+u+"\n"+plans))
		want := "t.yaml:1:11: upstream: "
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "a query in the upstream's URL is added to every proxied request") {
			t.Errorf("%s: error %v, want one at %s saying the query would be added to every request", u, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: the error repeats the query: %v", u, err)
		}
	}
	for _, u := range []string{"http://api.internal/v1", "http://api.internal/?"} { // "?" adds nothing
		c, err := config.Parse("t.yaml", []byte("upstream: "+u+"\n"+plans))
		if err != nil || c.Upstream != u {
			t.Errorf("upstream %s: %v", u, err)
		}
	}
}
