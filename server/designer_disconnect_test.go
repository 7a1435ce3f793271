package server

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A client that goes away stops its simulation: the run, which alone would
// hold the only slot for half a minute, gives it back within a few seconds
// of the disconnection, and the next run is admitted.
func TestDesignerRunStopsWhenItsClientGoesAway(t *testing.T) {
	d := newDesigner(designerLimits{concurrency: 1, workers: 1, maxWork: 1 << 62, timeout: 10 * time.Minute})
	started := make(chan struct{}, 1)
	d.running = func(context.Context) {
		select {
		case started <- struct{}{}:
		default:
		}
	}
	url := serveDesigner(t, d)
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(designerHeavy))
	if err != nil {
		t.Fatal(err)
	}
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			t.Errorf("the heavy run answered %d before its client went away", resp.StatusCode)
		}
	}()
	<-started
	time.Sleep(200 * time.Millisecond) // replaying
	cancel()
	<-gone
	deadline := time.Now().Add(5 * time.Second)
	for len(d.slots) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the run still holds its slot 5 s after its client went away")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if a := postDesigner(t, url, designerSmall); a.status != http.StatusOK {
		t.Errorf("the next run: %+v", a)
	}
}
