package server_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/degrade"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// A pin of the degradation level waits for a reload in progress: a reload
// that drops the degradation section resets the level to normal, and a pin
// that judged the old configuration but landed after the reset would
// leave the instance pinned at a level nothing moves any more (and
// sluice_degradation_level stuck there). Here the reload is held while it
// loads the new configuration, the pin arrives meanwhile, and is answered
// by the configuration the reload leaves: no section, a 409, level normal.
func TestAPinWaitsForAReloadThatDropsDegradation(t *testing.T) {
	plans := "plans:\n  free:\n    limits:\n      - {name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m}\n" + testAdmin
	with, err := config.Parse("with.yaml", []byte(plans+"degradation:\n  levels:\n    critical: {enter: {in_flight: 2000}, leave: {in_flight: 1200}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	without, err := config.Parse("without.yaml", []byte(plans))
	if err != nil {
		t.Fatal(err)
	}
	loading, release := make(chan struct{}), make(chan struct{})
	store := memory.New(memory.WithSweepInterval(0))
	t.Cleanup(func() { store.Close() })
	srv, err := server.New(server.Options{Config: with, Store: store, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Load: func() (*config.Config, error) {
			close(loading)
			<-release
			return without, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	reloaded := make(chan error, 1)
	go func() { reloaded <- srv.Reload() }()
	<-loading // the reload is in progress

	pinned := make(chan *httptest.ResponseRecorder, 1)
	go func() {
		req := httptest.NewRequest("PUT", "/v1/degradation", strings.NewReader(`{"level":"high"}`))
		req.Header.Set("Authorization", "Bearer "+testToken)
		rec := httptest.NewRecorder()
		srv.AdminHandler().ServeHTTP(rec, req)
		pinned <- rec
	}()
	time.Sleep(200 * time.Millisecond) // the pin, unheld, would be answered by now
	close(release)
	if err := <-reloaded; err != nil {
		t.Fatal(err)
	}
	rec := <-pinned
	if st := srv.Degradation(); rec.Code != http.StatusConflict || st.Level != degrade.Normal || st.Pinned {
		t.Errorf("a pin during a reload dropping the section: %d %s; then level %v, pinned %v; want 409, normal, unpinned",
			rec.Code, rec.Body, st.Level, st.Pinned)
	}
}
