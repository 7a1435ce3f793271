package envoy_test

import (
	"errors"
	"testing"

	"github.com/sluice-dev/sluice/envoy"
)

// SetHeaders changes the response headers of the requests that follow,
// while the service serves (a reload of envoy.headers and the draft-6
// names), and refuses what NewService refuses, changing nothing then.
func TestSetHeadersChangesTheHeadersOfTheRequestsThatFollow(t *testing.T) {
	h := serve(t, apiRules, envoy.Options{Headers: "none"})
	ask := func() string { return headerText(h.ask(request("api", 0, desc("client", "c"))).ResponseHeadersToAdd) }
	if got := ask(); got != "" {
		t.Fatalf("headers: none sends\n%s", got)
	}
	if err := h.svc.SetHeaders(envoy.Options{Headers: "draft-6", LimitHeader: "X-RateLimit-Limit"}); err != nil {
		t.Fatal(err)
	}
	if got, want := ask(), "X-RateLimit-Limit: 5\nRateLimit-Remaining: 3\nRateLimit-Reset: 60\nRateLimit-Policy: 5;w=60\n"; got != want {
		t.Errorf("after SetHeaders(draft-6):\n%s\nwant\n%s", got, want)
	}
	var fe *envoy.FieldError
	if err := h.svc.SetHeaders(envoy.Options{Headers: "ietf", LimitHeader: "X-RateLimit-Limit"}); !errors.As(err, &fe) || fe.Field != "LimitHeader" {
		t.Errorf("SetHeaders with a draft-6 name beside ietf: %v, want a *FieldError of LimitHeader", err)
	}
	if got, want := ask(), "X-RateLimit-Limit: 5\nRateLimit-Remaining: 2\nRateLimit-Reset: 60\nRateLimit-Policy: 5;w=60\n"; got != want {
		t.Errorf("after a refused SetHeaders:\n%s\nwant\n%s", got, want)
	}
	if err := h.svc.SetHeaders(envoy.Options{}); err != nil {
		t.Fatal(err)
	}
	if got, want := ask(), "RateLimit-Policy: \"per-client\";q=5;w=60\nRateLimit: \"per-client\";r=1;t=60\n"; got != want {
		t.Errorf("after SetHeaders(the default, ietf):\n%s\nwant\n%s", got, want)
	}
}
