package server_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The designer shows the answer to what its form asks now: a run whose
// answer comes after a later run's (a slower simulation, the page's first
// one held here until the second has answered) is not drawn over it, and
// the table, summary and chart stay those of the limit the form shows.
func TestBrowserDesignerShowsTheLatestRun(t *testing.T) {
	f := newFixture(t, testConfig)
	admin := f.srv.AdminHandler()
	secondDone, firstDone := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/designer/run" {
			admin.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if strings.Contains(string(body), `"limit":"100/1m"`) { // the page's first run
			defer close(firstDone)
			select {
			case <-secondDone:
			case <-r.Context().Done():
				return
			}
			admin.ServeHTTP(w, r)
			return
		}
		admin.ServeHTTP(w, r)
		close(secondDone)
	}))
	t.Cleanup(srv.Close)
	ctx := chromium.Tab(t)
	run(t, ctx, chromedp.Navigate(srv.URL+"/designer"))
	waitJS(t, ctx, `document.getElementById("limit") !== null`)
	eval[bool](t, ctx, `(() => {
		const l = document.getElementById("limit");
		l.value = "7/1m";
		return l.dispatchEvent(new Event("change"));
	})()`)
	waitJS(t, ctx, `document.getElementById("summary").textContent !== ""`)
	// The first run, released, answers (or was given up); its answer is
	// not drawn.
	<-firstDone
	time.Sleep(300 * time.Millisecond)
	summary := eval[string](t, ctx, `document.getElementById("summary").textContent`)
	worst := eval[string](t, ctx, `document.querySelector("#results tbody td:nth-child(4)").textContent`)
	if !strings.Contains(summary, "limit 7/1m per key") || !strings.HasSuffix(worst, "/ 7") {
		t.Errorf("the form asks for 7/1m; the page shows %q, worst window %q", summary, worst)
	}
}
