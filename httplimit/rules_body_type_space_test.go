package httplimit_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// A Content-Type with whitespace around it, which Go's HTTP/2 server
// passes on as sent (an HTTP/1.1 upstream's parser drops it), is of its
// type, as Go's ParseForm reads it whatever its parameters: a sign-in
// form sent so is counted by its field, not by its address.
func TestAFormWhoseContentTypeHasWhitespaceAroundIsReadByItsField(t *testing.T) {
	for _, ct := range []string{
		" application/x-www-form-urlencoded",
		"application/x-www-form-urlencoded\t",
		" application/x-www-form-urlencoded; x",
		"\tapplication/x-www-form-urlencoded;charset=utf-8 ",
	} {
		for _, fallback := range []string{httplimit.FallbackIP, httplimit.FallbackSkip} {
			mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "logins", Methods: []string{"POST"}, Paths: []string{"/login"},
				Key: []string{"form:username"}, Fallback: fallback, Limits: []sluice.Limit{sluice.FixedWindow(3, time.Minute)}})
			h := mw.Handler(echoBody())
			var got []int
			for i := range 4 {
				got = append(got, send(h, fmt.Sprintf("192.0.2.%d", i+1), "/login", ct, fmt.Sprintf("username=alice&password=p%d", i), false).Code)
			}
			if want := []int{200, 200, 200, 429}; !slices.Equal(got, want) {
				t.Errorf("Content-Type %q, fallback %s: alice from four addresses: %v, want %v", ct, fallback, got, want)
			}
		}
	}
}
