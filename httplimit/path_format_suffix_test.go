package httplimit_test

import (
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// A rule applies to a path with a format suffix as to the path without it:
// Rails routes every path with an optional (.:format) by default
// (`post "/v1/login"` is /v1/login(.:format)), so POST /v1/login.json and
// /v1/login.xml are its sign-in action, and a limit on /v1/login must not
// be escaped by adding ".json". The suffix is a dot and letters or digits
// ending the last segment after a name: /v1/login.tar.gz, /v1/login. and
// /v1/.json are no spelling of /v1/login.
func TestRailsFormatSuffixDoesNotEscapeARule(t *testing.T) {
	mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "logins", Methods: []string{"POST"}, Paths: []string{"/v1/login"},
		Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}})
	got := statuses(mw,
		req{method: "POST", path: "/v1/login", remote: "192.0.2.1:1"},
		req{method: "POST", path: "/v1/login.json", remote: "192.0.2.1:1"},
		req{method: "POST", path: "/v1/login.xml", remote: "192.0.2.1:1"},
		req{method: "POST", path: "/v1/login.json/", remote: "192.0.2.1:1"},
		req{method: "POST", path: "/v1/login.json;x=1", remote: "192.0.2.1:1"},
		req{method: "POST", path: "/V1/Login.JSON", remote: "192.0.2.1:1"},
	)
	if want := []int{200, 429, 429, 429, 429, 429}; !slices.Equal(got, want) {
		t.Errorf("POST /v1/login, then .json, .xml, .json/, .json;x=1 and /V1/Login.JSON (one Rails action): %v, want %v", got, want)
	}

	mw = exceptMiddleware(t, httplimit.Rule{Name: "api", Paths: []string{"/v1/login"}, Limits: big()})
	expectRuled(t, mw, []ruledCase{
		{req{path: "/v1/login.json"}, true},
		{req{path: "/v1/login.tar.gz"}, false},
		{req{path: "/v1/login."}, false},
		{req{path: "/v1/login.js-on"}, false},
		{req{path: "/v1/.json"}, false},
		{req{path: "/v1/login.json/x"}, false},
	})
}

// The reading without a format suffix adds a rule only under a pattern
// that the suffix steps off (/v1/login, not /, /v1/ or /v1/{name}, which
// the path as written is weighed under already): a path that except_paths
// or an Except entry leaves out as it is written, suffix and all, stays
// out ("/" except "/favicon.ico" is no limit on /favicon.ico).
func TestAFormatSuffixReadingKeepsExceptionsWrittenWithTheSuffix(t *testing.T) {
	mw := exceptMiddleware(t, httplimit.Rule{Name: "api", Paths: []string{"/"}, ExceptPaths: []string{"/favicon.ico"}, Limits: big()})
	expectRuled(t, mw, []ruledCase{
		{req{path: "/favicon.ico"}, false},
		{req{path: "/favicon"}, true},
	})
	mw = exceptMiddleware(t, httplimit.Rule{Name: "api", Except: []httplimit.Match{{Paths: []string{"/robots.txt"}}}, Limits: big()})
	expectRuled(t, mw, []ruledCase{
		{req{path: "/robots.txt"}, false},
		{req{path: "/robots"}, true},
	})
	mw = exceptMiddleware(t, httplimit.Rule{Name: "api", Paths: []string{"/v1/{name}"}, ExceptPaths: []string{"/v1/status.json"},
		Limits: big()})
	expectRuled(t, mw, []ruledCase{
		{req{path: "/v1/status.json"}, false},
		{req{path: "/v1/login.json"}, true},
	})
	// A pattern the suffix steps off names the action: its limit holds.
	mw = exceptMiddleware(t, httplimit.Rule{Name: "api", Paths: []string{"/v1/{name}", "/v1/login"},
		ExceptPaths: []string{"/v1/login.json"}, Limits: big()})
	expectRuled(t, mw, []ruledCase{{req{path: "/v1/login.json"}, true}})
}

// A path key reads the wildcards of the first reading that applies: the
// path as written where the rule's patterns match it ({name} of
// /files/a.json is "a.json"), the path without its format suffix only
// where that alone is the rule's ({id} of /files/x/raw.json is "x", one
// count with /files/x/raw).
func TestAPathKeyReadsTheFirstReadingThatApplies(t *testing.T) {
	mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "raw", Paths: []string{"/files/{id}/raw"},
		Key: []string{"path:id"}, Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}})
	got := statuses(mw,
		req{path: "/files/x/raw.json", remote: "192.0.2.1:1"},
		req{path: "/files/x/raw", remote: "192.0.2.2:1"},
		req{path: "/files/y/raw.csv", remote: "192.0.2.3:1"},
	)
	if want := []int{200, 429, 200}; !slices.Equal(got, want) {
		t.Errorf("x/raw.json, then x/raw, then y/raw.csv: %v, want %v", got, want)
	}

	mw, _ = rulesMiddleware(t, httplimit.Rule{Name: "files", Paths: []string{"/files/{name}"},
		Key: []string{"path:name"}, Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}})
	got = statuses(mw,
		req{path: "/files/a.json", remote: "192.0.2.1:1"},
		req{path: "/files/a", remote: "192.0.2.2:1"},
		req{path: "/files/a.json", remote: "192.0.2.3:1"},
	)
	if want := []int{200, 200, 429}; !slices.Equal(got, want) {
		t.Errorf("a.json, then a, then a.json: %v, want %v", got, want)
	}
}
