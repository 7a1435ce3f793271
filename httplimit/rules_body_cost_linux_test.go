//go:build linux

package httplimit_test

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/httplimit"
)

// threadCPU returns the CPU time the calling OS thread has used
// (RUSAGE_THREAD), which other processes on a loaded machine do not add to.
func threadCPU(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// A multipart body of at most MaxKeyBody bytes is read for a form: key on
// every request of the rule, refused ones too, before its check: what that
// costs is what any client may make sluice spend per request. A part's
// head is read as Rack 2.2's and Rack 3's patterns read it, in time linear
// in the head: one head of 64 KiB of "; name=a", "; a=b" or "; a*1*=%41"
// parameters costs about what mime/multipart takes to read the body, not
// the tens of milliseconds that matching those patterns with submatches
// over it takes.
func TestAHostileMultipartHeadIsCheapToRead(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	mw, _ := rulesMiddleware(t, bodyKeyRule("form:email", httplimit.FallbackIP, 1<<20))
	h := mw.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	room := httplimit.MaxKeyBody - 200
	for name, param := range map[string]string{"names": "; name=a", "params": "; a=b", "sections": "; a*1*=%41"} {
		body := "--X\r\nContent-Disposition: form-data" + strings.Repeat(param, room/len(param)) + "\r\n\r\nv\r\n--X--\r\n"
		best := time.Hour
		for range 10 {
			r := httptest.NewRequest("POST", "/login", strings.NewReader(body))
			r.Header.Set("Content-Type", "multipart/form-data; boundary=X")
			r.RemoteAddr = "192.0.2.1:1234"
			// A collection finished first leaves this thread no GC assist
			// to pay for the allocations of tests running beside it.
			runtime.GC()
			start := threadCPU(t)
			h.ServeHTTP(httptest.NewRecorder(), r)
			best = min(best, threadCPU(t)-start)
		}
		if best > 10*time.Millisecond {
			t.Errorf("%s: a multipart body of %d bytes, one head of %q repeated, costs %v of CPU to key (best of 10), want at most 10ms", name, len(body), param, best)
		}
	}
}
