package envoy_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// draft-6's headers are renamed as envoyproxy/ratelimit's
// LIMIT_LIMIT_HEADER, LIMIT_REMAINING_HEADER and LIMIT_RESET_HEADER rename
// them; a name left empty keeps its default.
func TestDraft6HeadersCanBeRenamed(t *testing.T) {
	h := serve(t, headerRules, envoy.Options{Headers: httplimit.ModeDraft6,
		LimitHeader: "X-RateLimit-Limit", RemainingHeader: "x-ratelimit-remaining"})
	ip, login := desc("remote_address", "1.2.3.4"), desc("remote_address", "1.2.3.4", "path", "/login")
	got := headerText(h.ask(request("edge", 0, ip, login)).ResponseHeadersToAdd)
	want := "X-RateLimit-Limit: 2\nx-ratelimit-remaining: 1\nRateLimit-Reset: 60\nRateLimit-Policy: 2;w=60\n"
	if got != want {
		t.Errorf("headers\n%s\nwant\n%s", got, want)
	}
	h = serve(t, headerRules, envoy.Options{Headers: httplimit.ModeDraft6, ResetHeader: "X-RateLimit-Reset"})
	got = headerText(h.ask(request("edge", 0, ip, login)).ResponseHeadersToAdd)
	want = "RateLimit-Limit: 2\nRateLimit-Remaining: 1\nX-RateLimit-Reset: 60\nRateLimit-Policy: 2;w=60\n"
	if got != want {
		t.Errorf("headers\n%s\nwant\n%s", got, want)
	}
}

// A header name must be an HTTP token, differ from the other headers the
// service adds, and be set only with the draft-6 headers that use it.
func TestDraft6HeaderNamesAreValidated(t *testing.T) {
	lim := sluice.NewLimiter(memory.New(memory.WithSweepInterval(0)))
	for _, c := range []struct {
		name  string
		opts  envoy.Options
		field string
		want  string
	}{
		{"a space", envoy.Options{Headers: "draft-6", LimitHeader: "X Limit"}, "LimitHeader",
			`envoy: Options.LimitHeader: "X Limit" is not a valid header name`},
		{"a colon", envoy.Options{Headers: "draft-6", RemainingHeader: "X-Left:"}, "RemainingHeader",
			`envoy: Options.RemainingHeader: "X-Left:" is not a valid header name`},
		{"another's name", envoy.Options{Headers: "draft-6", ResetHeader: "ratelimit-limit"}, "ResetHeader",
			`envoy: Options.ResetHeader: "ratelimit-limit" is the name of another header the service adds`},
		{"Retry-After", envoy.Options{Headers: "draft-6", LimitHeader: "Retry-After"}, "LimitHeader",
			`envoy: Options.LimitHeader: "Retry-After" is the name of another header the service adds`},
		{"the ietf mode", envoy.Options{LimitHeader: "X-RateLimit-Limit"}, "LimitHeader",
			`envoy: Options.LimitHeader: renames a draft-6 header, but Headers is "ietf"`},
	} {
		_, err := envoy.NewService(lim, nil, c.opts)
		var fe *envoy.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || err.Error() != c.want {
			t.Errorf("%s: error %v, want %s", c.name, err, c.want)
		}
	}
	if _, err := envoy.NewService(lim, nil, envoy.Options{Headers: "Draft-6", LimitHeader: "X-RateLimit-Limit",
		RemainingHeader: "X-RateLimit-Remaining", ResetHeader: "X-RateLimit-Reset"}); err != nil {
		t.Errorf("three valid names: %v", err)
	}
	if o := (envoy.Options{Headers: "draft-6"}).WithDefaults(); o.LimitHeader != "RateLimit-Limit" ||
		o.RemainingHeader != "RateLimit-Remaining" || o.ResetHeader != "RateLimit-Reset" {
		t.Errorf("defaults %q, %q, %q", o.LimitHeader, o.RemainingHeader, o.ResetHeader)
	}
	if strings.Contains((envoy.Options{}).WithDefaults().LimitHeader, "RateLimit") {
		t.Error("the ietf mode takes a draft-6 name by default")
	}
}
