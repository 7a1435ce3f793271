package httplimit_test

import (
	"crypto/sha256"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// Options with nothing but a plan, and UnknownKeys "key" making every key
// a client of its own, identify clients by API key (Authorization: Bearer,
// else X-API-Key), else by address (IPv4 /32, IPv6 /64), and send the ietf
// RateLimit headers. (Without UnknownKeys, a key not listed is its address:
// TestMadeUpKeysWithNoKeysListedAreTheirAddress.)
func TestZeroOptionsLimitByAPIKeyWithIETFHeaders(t *testing.T) {
	mw, err := httplimit.New(sluice.NewLimiter(memory.New(memory.WithSweepInterval(0))), httplimit.Options{
		Plans:       []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.PerMinute(1)}}},
		UnknownKeys: "key",
	})
	if err != nil {
		t.Fatal(err)
	}
	h := mw.Handler(okHandler())
	const ip = "192.0.2.1:1234"
	for _, c := range []struct {
		name   string
		header map[string]string
		remote string
		want   int
	}{
		{"first key", map[string]string{"Authorization": "Bearer key-a"}, ip, 200},
		{"first key again", map[string]string{"Authorization": "Bearer key-a"}, ip, 429},
		{"second key, same address", map[string]string{"Authorization": "Bearer key-b"}, ip, 200},
		{"third key in X-API-Key", map[string]string{"X-API-Key": "key-c"}, ip, 200},
		{"first key in X-API-Key", map[string]string{"X-API-Key": "key-a"}, ip, 429},
		{"no key", nil, ip, 200},
		{"no key, same address", nil, ip, 429},
		{"no key, another /32", nil, "192.0.2.2:1", 200},
		{"no key, IPv6", nil, "[2001:db8::1]:1", 200},
		{"no key, same /64", nil, "[2001:db8::2]:1", 429},
	} {
		w := do(h, req{remote: c.remote, header: c.header})
		if w.Code != c.want {
			t.Errorf("%s: %d, want %d", c.name, w.Code, c.want)
		}
		if got := w.Header().Get("RateLimit-Policy"); got != `"per-minute";q=1;w=60` {
			t.Errorf("%s: RateLimit-Policy %q", c.name, got)
		}
		if got := w.Header().Get("RateLimit"); !strings.HasPrefix(got, `"per-minute";r=0;t=`) {
			t.Errorf("%s: RateLimit %q", c.name, got)
		}
		if w.Header().Get("X-RateLimit-Limit") != "" || w.Header().Get("RateLimit-Limit") != "" {
			t.Errorf("%s: headers of another mode: %v", c.name, w.Header())
		}
	}
}

// New refuses invalid options with an error naming the field, and accepts
// header modes in any case.
func TestNewRefusesInvalidOptions(t *testing.T) {
	free := func() *httplimit.Plan {
		return &httplimit.Plan{Name: "free", Limits: []sluice.Limit{sluice.PerMinute(10)}}
	}
	pro := &httplimit.Plan{Name: "pro", Limits: []sluice.Limit{sluice.PerMinute(100)}}
	valid := func() httplimit.Options { return httplimit.Options{Plans: []*httplimit.Plan{free(), pro}} }
	with := func(f func(o *httplimit.Options)) httplimit.Options { o := valid(); f(&o); return o }
	key := sha256.Sum256([]byte("k"))
	cases := []struct {
		name  string
		o     httplimit.Options
		field string
		want  string // the whole message of the only error
	}{
		{"unknown default plan", with(func(o *httplimit.Options) { o.DefaultPlan = "fre" }), "DefaultPlan",
			`httplimit: Options.DefaultPlan: "fre" is not a plan (plans: free, pro)`},
		{"unknown anonymous plan", with(func(o *httplimit.Options) { o.AnonymousPlan = "anon" }), "AnonymousPlan",
			`httplimit: Options.AnonymousPlan: "anon" is not a plan (plans: free, pro)`},
		{"PerSecond(0)", with(func(o *httplimit.Options) { o.Plans[0].Limits = []sluice.Limit{sluice.PerSecond(0)} }), "Plans[0].Limits[0]",
			`httplimit: Options.Plans[0].Limits[0]: invalid limit`},
		{"zero Limit", with(func(o *httplimit.Options) { o.Global = []sluice.Limit{{}} }), "Global[0]",
			`httplimit: Options.Global[0]: invalid limit: zero Limit`},
		{"unknown header mode", with(func(o *httplimit.Options) { o.Headers = []string{"ietf", "draft-8"} }), "Headers[1]",
			`httplimit: Options.Headers[1]: "draft-8" is not a header mode (ietf, draft-7, draft-6, legacy)`},
		{"no plans", httplimit.Options{}, "Plans", `httplimit: Options.Plans: at least one plan is needed`},
		{"nil plan", httplimit.Options{Plans: []*httplimit.Plan{nil}}, "Plans[0]", `httplimit: Options.Plans[0]: nil plan`},
		{"plan without limits", httplimit.Options{Plans: []*httplimit.Plan{{Name: "free"}}}, "Plans[0].Limits",
			`httplimit: Options.Plans[0].Limits: a plan needs at least one limit`},
		{"bad plan name", httplimit.Options{Plans: []*httplimit.Plan{{Name: "a b", Limits: []sluice.Limit{sluice.PerMinute(1)}}}}, "Plans[0].Name",
			`httplimit: Options.Plans[0].Name: plan name "a b" must be 1-64 characters of A-Z a-z 0-9 . _ -`},
		{"plan twice", httplimit.Options{Plans: []*httplimit.Plan{free(), free()}}, "Plans[1].Name",
			`httplimit: Options.Plans[1].Name: "free" is already the name of Plans[0]`},
		{"limit twice", with(func(o *httplimit.Options) { o.Plans[0].Limits = append(o.Plans[0].Limits, sluice.PerMinute(5)) }), "Plans[0].Limits[1]",
			`httplimit: Options.Plans[0].Limits[1]: "per-minute" is already a limit of this list`},
		{"global name clash", with(func(o *httplimit.Options) { o.Global = []sluice.Limit{sluice.PerMinute(1000)}; o.Plans = o.Plans[:1] }), "Plans[0].Limits[0]",
			`httplimit: Options.Plans[0].Limits[0]: limit "per-minute" has the name of a global limit`},
		{"bad cost pattern", with(func(o *httplimit.Options) { o.Plans[0].Costs = map[string]int64{"FETCH": 2} }), `Plans[0].Costs["FETCH"]`,
			`httplimit: Options.Plans[0].Costs["FETCH"]: "FETCH" is not a ServeMux pattern`},
		{"cost above burst", with(func(o *httplimit.Options) { o.Plans[0].Costs = map[string]int64{"POST /x": 11} }), `Plans[0].Costs["POST /x"]`,
			`httplimit: Options.Plans[0].Costs["POST /x"]: costs 11, more than limit per-minute can ever hold (10)`},
		{"negative cost", with(func(o *httplimit.Options) { o.Plans[0].Costs = map[string]int64{"POST /x": -1} }), `Plans[0].Costs["POST /x"]`,
			`httplimit: Options.Plans[0].Costs["POST /x"]: -1 is out of range`},
		{"upgrade to unknown plan", with(func(o *httplimit.Options) { o.Plans[0].Upgrade = &httplimit.Upgrade{Plan: "gold"} }), "Plans[0].Upgrade.Plan",
			`httplimit: Options.Plans[0].Upgrade.Plan: "gold" is not a plan (plans: free, pro)`},
		{"relative upgrade URL", with(func(o *httplimit.Options) { o.Plans[0].Upgrade = &httplimit.Upgrade{Plan: "pro", URL: "/pricing"} }), "Plans[0].Upgrade.URL",
			`httplimit: Options.Plans[0].Upgrade.URL: "/pricing" is not an absolute URL`},
		{"script upgrade URL", with(func(o *httplimit.Options) {
			o.Plans[0].Upgrade = &httplimit.Upgrade{Plan: "pro", URL: "javascript:alert(1)"}
		}), "Plans[0].Upgrade.URL",
			`httplimit: Options.Plans[0].Upgrade.URL: "javascript:alert(1)" is not an http or https URL`},
		{"docs URL of no web page", with(func(o *httplimit.Options) { o.DocsURL = "data:text/html,hi" }), "DocsURL",
			`httplimit: Options.DocsURL: "data:text/html,hi" is not an http or https URL`},
		{"docs URL with a password and no scheme", with(func(o *httplimit.Options) { o.DocsURL = "docs:hunter2@example.com/limits" }), "DocsURL",
			`httplimit: Options.DocsURL: "docs:xxxxx@example.com/limits" is not an http or https URL`},
		{"upgrade URL with a password url.Parse refuses", with(func(o *httplimit.Options) {
			o.Plans[0].Upgrade = &httplimit.Upgrade{Plan: "pro", URL: "https://shop:hunter2%x@example.com/pricing"}
		}), "Plans[0].Upgrade.URL",
			`httplimit: Options.Plans[0].Upgrade.URL: "https://shop:xxxxx@example.com/pricing" is not an absolute URL`},
		{"relative docs URL", with(func(o *httplimit.Options) { o.DocsURL = "docs/limits" }), "DocsURL",
			`httplimit: Options.DocsURL: "docs/limits" is not an absolute URL`},
		{"key twice", with(func(o *httplimit.Options) { o.Keys = []httplimit.Key{{SHA256: key}, {SHA256: key, Plan: pro}} }), "Keys[1].SHA256",
			`httplimit: Options.Keys[1].SHA256: the same key is configured twice (Keys[0])`},
		{"key plan invalid", with(func(o *httplimit.Options) {
			o.Keys = []httplimit.Key{{SHA256: key, Plan: &httplimit.Plan{Name: "free", Limits: []sluice.Limit{sluice.GCRA(0, time.Minute)}}}}
		}), "Keys[0].Plan.Limits[0]", `httplimit: Options.Keys[0].Plan.Limits[0]: invalid limit`},
		{"bad API key header", with(func(o *httplimit.Options) { o.APIKeyHeaders = []string{"X-Key", "X Key"} }), "APIKeyHeaders[1]",
			`httplimit: Options.APIKeyHeaders[1]: "X Key" is not a valid header name`},
		{"bad user header", with(func(o *httplimit.Options) { o.UserHeader = "X-User:" }), "UserHeader",
			`httplimit: Options.UserHeader: "X-User:" is not a valid header name`},
		{"bad proxy", with(func(o *httplimit.Options) { o.TrustedProxies = []netip.Prefix{{}} }), "TrustedProxies[0]",
			`httplimit: Options.TrustedProxies[0]: invalid Prefix is not an IP address or CIDR prefix`},
		{"unknown forwarded header", with(func(o *httplimit.Options) { o.ForwardedHeader = "x-real-ip" }), "ForwardedHeader",
			`httplimit: Options.ForwardedHeader: "x-real-ip" is not one of x-forwarded-for, forwarded`},
		{"IPv4 prefix too long", with(func(o *httplimit.Options) { o.IPv4Prefix = 33 }), "IPv4Prefix",
			`httplimit: Options.IPv4Prefix: 33 is out of range [1, 32]`},
		{"negative IPv6 prefix", with(func(o *httplimit.Options) { o.IPv6Prefix = -1 }), "IPv6Prefix",
			`httplimit: Options.IPv6Prefix: -1 is out of range [1, 128]`},
		{"unknown unknown-keys rule", with(func(o *httplimit.Options) { o.UnknownKeys = "deny" }), "UnknownKeys",
			`httplimit: Options.UnknownKeys: "deny" is not one of ip, key`},
		{"bad exempt pattern", with(func(o *httplimit.Options) { o.Exempt = []string{"GET /healthz", "GET healthz"} }), "Exempt[1]",
			`httplimit: Options.Exempt[1]: "GET healthz" is not a ServeMux pattern`},
		{"an exempt glob", with(func(o *httplimit.Options) { o.Exempt = []string{"GET /static/*"} }), "Exempt[0]",
			`httplimit: Options.Exempt[0]: "GET /static/*": segment "*" is no wildcard: ServeMux matches it as it is written, so it matches only the path with that segment (the subtree is "/static/", one segment {name}, the rest {name...})`},
		{"a cost of a glob", with(func(o *httplimit.Options) { o.Plans[0].Costs = map[string]int64{"GET api.example.com/files/*.png": 2} }), `Plans[0].Costs["GET api.example.com/files/*.png"]`,
			`httplimit: Options.Plans[0].Costs["GET api.example.com/files/*.png"]: "GET api.example.com/files/*.png": segment "*.png" is no wildcard: ServeMux matches it as it is written`},
		{"conflicting exempt patterns", with(func(o *httplimit.Options) { o.Exempt = []string{"GET /a", "/b", "GET /a"} }), "Exempt[2]",
			`httplimit: Options.Exempt[2]: "GET /a" conflicts with "GET /a"`},
		{"conflicting cost patterns", with(func(o *httplimit.Options) { o.Plans[0].Costs = map[string]int64{"GET /a/{x}": 2, "GET /{y}/b": 2} }),
			`Plans[0].Costs["GET /{y}/b"]`, `httplimit: Options.Plans[0].Costs["GET /{y}/b"]: "GET /{y}/b" conflicts with "GET /a/{x}"`},
	}
	lim := sluice.NewLimiter(memory.New(memory.WithSweepInterval(0)))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mw, err := httplimit.New(lim, c.o)
			if err == nil {
				t.Fatalf("accepted (%v)", mw)
			}
			if !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error:\n%v\nwant one error beginning with:\n%s", err, c.want)
			}
			var fe *httplimit.FieldError
			if !errors.As(err, &fe) || fe.Field != c.field {
				t.Errorf("error %v: want a *FieldError of %s", err, c.field)
			}
			if verr := c.o.Validate(); verr == nil || verr.Error() != err.Error() {
				t.Errorf("Validate: %v, New: %v", verr, err)
			}
		})
	}
	if _, err := httplimit.New(nil, valid()); err == nil {
		t.Error("nil limiter accepted")
	}
	for _, modes := range [][]string{{"IETF"}, {"Draft-7", "LEGACY"}, {"draft-6"}, nil} {
		if _, err := httplimit.New(lim, with(func(o *httplimit.Options) { o.Headers = modes })); err != nil {
			t.Errorf("modes %q: %v", modes, err)
		}
	}
	if _, err := httplimit.New(lim, with(func(o *httplimit.Options) { o.ForwardedHeader = "Forwarded"; o.UnknownKeys = "IP" })); err != nil {
		t.Errorf("forwarded header and unknown keys in another case: %v", err)
	}
}

// Header modes given in any case are sent as their lower-case mode.
func TestHeaderModesInAnyCase(t *testing.T) {
	mw, err := httplimit.New(sluice.NewLimiter(memory.New(memory.WithSweepInterval(0))), httplimit.Options{
		Plans:   []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.PerMinute(5)}}},
		Headers: []string{"IETF", "Legacy"},
	})
	if err != nil {
		t.Fatal(err)
	}
	w := do(mw.Handler(okHandler()), req{remote: "192.0.2.1:1"})
	if w.Header().Get("RateLimit") == "" || w.Header().Get("X-RateLimit-Limit") != "5" {
		t.Errorf("headers %v", w.Header())
	}
}

// Keys without a plan are on the default plan; unlisted keys are then
// limited by address.
func TestKeysWithoutPlanTakeTheDefault(t *testing.T) {
	free := &httplimit.Plan{Name: "free", Limits: []sluice.Limit{sluice.PerMinute(1)}}
	pro := &httplimit.Plan{Name: "pro", Limits: []sluice.Limit{sluice.PerMinute(3)}}
	mw, err := httplimit.New(sluice.NewLimiter(memory.New(memory.WithSweepInterval(0))), httplimit.Options{
		Plans: []*httplimit.Plan{free, pro}, DefaultPlan: "pro", AnonymousPlan: "free",
		Keys: []httplimit.Key{{Name: "k", SHA256: sha256.Sum256([]byte("listed"))}},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := mw.Handler(okHandler())
	if w := do(h, req{header: map[string]string{"X-API-Key": "listed"}}); w.Header().Get("RateLimit-Policy") != `"per-minute";q=3;w=60` {
		t.Errorf("listed key: %v", w.Header())
	}
	if w := do(h, req{header: map[string]string{"X-API-Key": "unlisted"}}); w.Header().Get("RateLimit-Policy") != `"per-minute";q=1;w=60` {
		t.Errorf("unlisted key: %v", w.Header())
	}
}
