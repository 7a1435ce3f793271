package httplimit_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/sluice-dev/sluice/httplimit"
)

// Rack 2.2 and Rack 3 (to 3.2) take a part's head to the first "\r\n\r\n"
// (Parser's @head_regex, /(.*?\r\n)\r\n/m), so a head ended by a bare
// "\n\n", which mime/multipart accepts, runs on through the next part's
// head, and the part's value is the next part's content: each body below
// is {"email"=>"victim"} to the real Rack 2.2.22, email=decoyN to Go.
// Rack delimits its parts otherwise than Go, so every such request of the
// rule is counted together, from any address; counted by decoyN alone,
// each attempt at the victim's account would be a key of its own.
func TestAHeadEndedByABareLineFeedIsCountedTogether(t *testing.T) {
	mp := http.Header{"Content-Type": {"multipart/form-data; boundary=X"}}
	mw, _ := rulesMiddleware(t, bodyKeyRule("form:email", httplimit.FallbackIP, 2))
	h := mw.Handler(echoBody())
	var got []int
	for i := range 3 {
		body := "--X\r\nContent-Disposition: form-data; name=\"email\"\n\ndecoy" + fmt.Sprint(i) +
			"\r\n--X\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\nvictim\r\n--X--\r\n"
		got = append(got, sendTyped(t, h, fmt.Sprintf("192.0.2.%d", i+1), mp, body))
	}
	if want := []int{200, 200, 429}; !slices.Equal(got, want) {
		t.Errorf("victim (to Rack 2.2) behind a head ended by LF, from three addresses: %v, want %v", got, want)
	}
}

// Rack 2.2 ends a part's content at the first "--X\r\n" or "--X--" in it,
// a line end before it or not (Parser's @body_regex,
// /(?:\r\n)?--X(?:\r\n|--)/m), and then skips lines to the next delimiter
// line; mime/multipart ends it only at a line end and "--X". A part
// "victim--X--N" (or "victim--X\r\nN") is {"email"=>"victim"} to the real
// Rack 2.2.22, "victim--X--N" to Go: every such request is counted
// together.
func TestAPartEndingMidLineToRackIsCountedTogether(t *testing.T) {
	mp := http.Header{"Content-Type": {"multipart/form-data; boundary=X"}}
	for _, tail := range []string{"--X--%d", "--X\r\n%d"} {
		mw, _ := rulesMiddleware(t, bodyKeyRule("form:email", httplimit.FallbackIP, 2))
		h := mw.Handler(echoBody())
		var got []int
		for i := range 3 {
			body := "--X\r\nContent-Disposition: form-data; name=\"email\"\r\n\r\nvictim" + fmt.Sprintf(tail, i) + "\r\n--X--\r\n"
			got = append(got, sendTyped(t, h, fmt.Sprintf("192.0.2.%d", i+1), mp, body))
		}
		if want := []int{200, 200, 429}; !slices.Equal(got, want) {
			t.Errorf("victim (to Rack 2.2) followed by %q, from three addresses: %v, want %v", tail, got, want)
		}
	}
}

// Rack 2.2 reads a final delimiter "--X--" that opens the body (or ends its
// preamble) as the opening one when more follows it (Parser's
// handle_fast_forward), where mime/multipart reads the end of a body of no
// part: each body below is {"email"=>"victim"} to the real Rack 2.2.22 and
// no field to Go, so every such request is counted together rather than
// by its address.
func TestAFinalDelimiterOpeningTheBodyIsCountedTogether(t *testing.T) {
	mp := http.Header{"Content-Type": {"multipart/form-data; boundary=X"}}
	for _, preamble := range []string{"", "pre\r\n"} {
		mw, _ := rulesMiddleware(t, bodyKeyRule("form:email", httplimit.FallbackIP, 2))
		h := mw.Handler(echoBody())
		var got []int
		for i := range 3 {
			body := preamble + "--X--\r\nContent-Disposition: form-data; name=\"email\"\r\n\r\nvictim\r\n--X--\r\n"
			got = append(got, sendTyped(t, h, fmt.Sprintf("192.0.2.%d", i+1), mp, body))
		}
		if want := []int{200, 200, 429}; !slices.Equal(got, want) {
			t.Errorf("victim (to Rack 2.2) after %q and a final delimiter, from three addresses: %v, want %v", preamble, got, want)
		}
	}
}
