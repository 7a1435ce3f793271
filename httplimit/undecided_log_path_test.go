package httplimit_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// The warnings of a request or a standing read the store could not decide
// repeat its path, which the client chooses: cut to 1,024 bytes.
func TestUndecidedLinesCutTheirPath(t *testing.T) {
	var logs bytes.Buffer
	mw, err := httplimit.New(sluice.NewLimiter(ctxStore{}), httplimit.Options{
		Plans:       []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.PerMinute(2).Named("per-minute")}}},
		DefaultPlan: "free",
		Logger:      slog.New(slog.NewTextHandler(&logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	path := "/" + strings.Repeat("é", 5000)
	mw.Handler(http.NotFoundHandler()).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, path, nil))
	mw.StatusHandler().ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, path, nil))
	if n := strings.Count(logs.String(), "not decided"); n != 2 {
		t.Fatalf("%d lines of a failure to decide, want 2:\n%.500s", n, logs.String())
	}
	for line := range strings.Lines(logs.String()) {
		if len(line) > 1500 || !strings.Contains(line, "é…") {
			t.Errorf("a line of %d bytes, want its path cut (…): %.200s…", len(line), line)
		}
	}
}
