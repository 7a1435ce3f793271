package httplimit_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// A streaming handler that flushes before it writes a status has sent a
// 200: net/http ignores a WriteHeader after it (a superfluous one, as a
// stream that fails before its first event calls http.Error). The answer counted must be
// the 200 the client got, not the status written too late to be sent.
func TestAFlushBeforeAnyStatusAnswers200(t *testing.T) {
	mw, _ := clockedMiddleware(t, httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute).Named("fails")}}},
		Count: map[string]string{"fails": httplimit.CountFailures},
	})
	h := mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		http.NewResponseController(w).Flush() // the stream's header goes out: a 200
		http.Error(w, "the stream broke", http.StatusInternalServerError)
	}))
	var got []int
	for range 3 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/events", nil))
		got = append(got, w.Code)
	}
	// A limit of one failure: the 200s the client got are none.
	if want := []int{200, 200, 200}; !slices.Equal(got, want) {
		t.Errorf("statuses %v, want %v", got, want)
	}
}
