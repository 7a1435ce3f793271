package httplimit_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/httplimit"
)

// An MP4 file starts with its ftyp box: 00 00 00 20 'ftyp' 'isom' … Its
// zero bytes read as UTF-32BE, where 0x20 is a space and 'ftyp' is no
// character, so no JSON reader reads it as JSON (Python's json.loads
// refuses it, encoding/json its first byte). Uploads of it past
// MaxKeyBody, to a route whose rule keys on a body field with the
// client's address as fallback, start otherwise than with '{': each is
// counted by its address, as the same upload under MaxKeyBody is, not
// all together.
func TestAnUploadWhoseOpeningDoesNotDecodeIsNoJSON(t *testing.T) {
	mp4 := "\x00\x00\x00\x20ftypisom\x00\x00\x02\x00isomiso2avc1mp41\x00\x00\x00\x08free" + strings.Repeat("\xAB\xCD", httplimit.MaxKeyBody)
	for _, key := range []string{"json:user", "form:user"} {
		mw, _ := rulesMiddleware(t, bodyKeyRule(key, httplimit.FallbackIP, 1))
		h := mw.Handler(echoBody())
		var got []int
		for i := range 3 {
			got = append(got, sendTyped(t, h, fmt.Sprintf("192.0.2.%d", i+1), http.Header{"Content-Type": {"video/mp4"}}, mp4))
		}
		if want := []int{200, 200, 200}; !slices.Equal(got, want) {
			t.Errorf("%s: an MP4 upload of %d bytes from three addresses: %v, want %v (each by its address)", key, len(mp4), got, want)
		}
	}
}
