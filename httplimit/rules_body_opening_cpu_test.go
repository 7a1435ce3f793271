//go:build linux

package httplimit_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/httplimit"
)

// trickle is a request body that reads at most n bytes a call, as Go's
// server reads the body of a client that sends it a few bytes a packet.
type trickle struct {
	r *strings.Reader
	n int
}

func (t trickle) Read(p []byte) (int, error) {
	return t.r.Read(p[:min(len(p), t.n)])
}

// A body declared longer than MaxKeyBody is not read whole: its opening is
// read up to its first character but whitespace, at most MaxKeyBody
// bytes, to tell whether it may open a JSON object. Each byte is looked at
// once as it arrives, so a body of whitespace, ASCII or UTF-16, that
// arrives 4 bytes a Read (some 16,000 Reads) costs about what reading it
// at once does, not time quadratic in MaxKeyBody: a client pacing its
// packets so does not keep a core busy.
func TestATrickledOpeningIsReadInLinearTime(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for name, unit := range map[string]string{"spaces": " ", "UTF-16 spaces": " \x00"} {
		mw, _ := rulesMiddleware(t, bodyKeyRule("json:email", httplimit.FallbackIP, 1<<20))
		h := mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
		body := strings.Repeat(unit, (httplimit.MaxKeyBody+4096)/len(unit))
		r := httptest.NewRequest("POST", "/login", nil)
		r.Body = io.NopCloser(trickle{strings.NewReader(body), 4})
		r.ContentLength = int64(len(body))
		r.Header.Set("Content-Type", "application/octet-stream")
		r.RemoteAddr = "192.0.2.1:1234"
		start := threadCPU(t)
		h.ServeHTTP(httptest.NewRecorder(), r)
		if spent := threadCPU(t) - start; spent > 20*time.Millisecond {
			t.Errorf("%s: a body of %d bytes read 4 bytes a Read costs %v of CPU to key, want at most 20ms", name, len(body), spent)
		}
	}
}
