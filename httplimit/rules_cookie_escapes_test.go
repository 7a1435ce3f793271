package httplimit_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// A rule keyed by a session cookie ("cookie:session") counts each session
// once however its value is percent-encoded. Express (the cookie package:
// decodeURIComponent), Rails (Rack::Utils.parse_cookies_header: unescape)
// and PHP ($_COOKIE: urldecode) decode a cookie's value before the
// application reads it, so "session=abc", "session=%61bc" and
// "session=%61%62%63" are one session, abc, to them: a client re-spelling
// its one session cookie (2^n spellings of an n-byte value, more with
// either case of hex) earns no fresh count with each spelling.
func TestACookieKeyIsOneCountHoweverItsValueIsPercentEncoded(t *testing.T) {
	mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "sessions", Key: []string{"cookie:session"}, Fallback: httplimit.FallbackSkip,
		Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}})
	var rs []req
	for i, v := range []string{"abc", "%61bc", "a%62c", "ab%63", "%61%62%63", "\"%61bc\"", "a%62c%20"} {
		rs = append(rs, req{remote: fmt.Sprintf("192.0.2.%d:1", i+1), header: map[string]string{"Cookie": "session=" + v}})
	}
	rs = append(rs, req{remote: "192.0.2.9:1", header: map[string]string{"Cookie": "session=abd"}})
	if got, want := statuses(mw, rs...), []int{200, 429, 429, 429, 429, 429, 429, 200}; !slices.Equal(got, want) {
		t.Errorf("session=abc, then six other spellings of it, then abd: %v, want %v", got, want)
	}
}
