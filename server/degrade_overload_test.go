package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/degrade"
)

// Real overload, end to end: ten clients in a loop hold about ten requests
// in flight on an upstream that takes 100ms, past degradeConfig's high (8)
// and short of its critical (16). The level rises to high by itself; there
// the critical write and the health check are still served, another write
// is shed with 503, a Retry-After of degradation.retry_after and a problem
// of type temporary-reduced-capacity. When the load stops the level is
// back at normal within 2 dwells and 2 intervals (two steps down), plus
// the time a loaded machine's scheduling may add.
func TestAnOverloadShedsAllButCriticalAndEndsInTime(t *testing.T) {
	srv, base := startDegrading(t)
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			for !stop.Load() {
				if resp, err := http.Get(base + "/api/search"); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
		})
	}
	deadline := time.Now().Add(5 * time.Second)
	for srv.Degradation().Level < degrade.High && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	level := srv.Degradation().Level
	if level == degrade.High {
		if code, _ := status(t, "POST", base+"/api/pay"); code != 200 {
			t.Errorf("at high under load, the critical write: %d, want 200", code)
		}
		if code, _ := status(t, "GET", base+"/health"); code != 200 {
			t.Errorf("at high under load, the health check: %d, want 200", code)
		}
		resp, err := http.Post(base+"/api/orders", "application/json", nil)
		if err != nil {
			t.Fatal(err)
		}
		var p struct{ Type string }
		json.NewDecoder(resp.Body).Decode(&p)
		resp.Body.Close()
		wait, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		if resp.StatusCode != 503 || wait != 2 || p.Type != "https://iana.org/assignments/http-problem-types#temporary-reduced-capacity" {
			t.Errorf("at high under load, a write: %d, Retry-After %q, type %q; want 503 after 2s, temporary-reduced-capacity",
				resp.StatusCode, resp.Header.Get("Retry-After"), p.Type)
		}
	}
	stop.Store(true)
	wg.Wait()
	if level != degrade.High {
		t.Fatalf("ten requests in flight on a threshold of 8 (and 16): level %v, want high", level)
	}
	ended := time.Now()
	for srv.Degradation().Level != degrade.Normal && time.Since(ended) < 10*time.Second {
		time.Sleep(5 * time.Millisecond)
	}
	const most = 2*(300*time.Millisecond+25*time.Millisecond) + 2*time.Second
	if took := time.Since(ended); srv.Degradation().Level != degrade.Normal || took > most {
		t.Errorf("after the load: %v %v later, want normal within %v", srv.Degradation().Level, took, most)
	}
}
