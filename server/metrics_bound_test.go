package server_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-dev/sluice/server"
)

// blockingCollector holds every Collect until release is closed.
type blockingCollector struct {
	entered chan struct{}
	release chan struct{}
}

func (c *blockingCollector) Describe(chan<- *prometheus.Desc) {}
func (c *blockingCollector) Collect(chan<- prometheus.Metric) {
	c.entered <- struct{}{}
	<-c.release
}

// /metrics gathers every metric of the process (and reads /proc) on each
// scrape: at most four run at once, and one beyond them is a 503 with
// Retry-After, not a fifth gathering.
func TestMetricsScrapesAtOnceAreBounded(t *testing.T) {
	c := &blockingCollector{entered: make(chan struct{}, 16), release: make(chan struct{})}
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	f := newFixtureWith(t, testConfig, func(o *server.Options) { o.Registry = reg })
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(c.release)
	for range 4 {
		wg.Go(func() {
			if r := f.do(t, "GET", "/metrics", "", nil); r.StatusCode != http.StatusOK {
				t.Errorf("a scrape within the bound: %d", r.StatusCode)
			}
		})
	}
	for i := range 4 {
		select {
		case <-c.entered:
		case <-time.After(5 * time.Second):
			t.Fatalf("%d scrapes gathering, want 4", i)
		}
	}
	fifth := make(chan *http.Response, 1)
	wg.Go(func() { fifth <- f.do(t, "GET", "/metrics", "", nil) })
	select {
	case r := <-fifth:
		if r.StatusCode != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
			t.Errorf("a fifth scrape at once: %d, Retry-After %q; want 503 with Retry-After", r.StatusCode, r.Header.Get("Retry-After"))
		}
	case <-c.entered:
		t.Errorf("a fifth scrape gathered beside four others")
	case <-time.After(5 * time.Second):
		t.Errorf("a fifth scrape neither answered nor gathered in 5 s")
	}
}
