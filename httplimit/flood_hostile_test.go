package httplimit_test

import (
	"fmt"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

const floodConfig = `
store: {type: memory, max_keys: 10000}
identity:
  unknown_keys: key       # every made-up API key is its own client
plans:
  free:
    limits:
      - {name: per-second, algorithm: token-bucket, quantity: 5, window: 1s}
      - {name: per-day, algorithm: fixed-window, quantity: 1000, window: 24h}
default_plan: free
anonymous_plan: free
`

// discard is a ResponseWriter that keeps only the status.
type discard struct {
	h      http.Header
	status int
}

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(status int)      { d.status = status }

// allocsPerServe serves r with h once, then returns the allocations of
// serving it again (testing.AllocsPerRun over 1,000 runs, rounded down)
// and the writer of the last answer.
func allocsPerServe(h http.Handler, r *http.Request) (float64, *discard) {
	w := &discard{h: http.Header{}}
	serve := func() {
		clear(w.h)
		w.status = 0
		h.ServeHTTP(w, r)
	}
	serve()
	return testing.AllocsPerRun(1000, serve), w
}

// floodRequests is the size of the key flood: 300,000 new clients, two
// states each, 60 times what the store may hold (10,000 keys) — enough to
// churn it through many times over, and to finish under the race detector
// on a busy 2-core machine.
const floodRequests = 300_000

// floodRequests requests, each from a client never seen before — a third with
// a fresh API key, a third from a fresh IPv4 address, a third from a fresh
// IPv6 /64 — go through the middleware on the store the server opens for
// store.max_keys 10000 (two limits per client, so twice as many states): the
// store never holds more than 10,000 states, the heap does not grow with
// the flood, and every request is admitted (each client is new).
func TestKeyFloodStaysWithinMaxKeys(t *testing.T) {
	cfg, err := config.Parse("flood.yaml", []byte(floodConfig))
	if err != nil {
		t.Fatal(err)
	}
	opened, err := server.OpenStore(cfg, nil, memory.WithSweepInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	defer opened.Close()
	mem := opened.Store.(*memory.Store)
	mw, err := httplimit.New(sluice.NewLimiter(mem), quiet(cfg))
	if err != nil {
		t.Fatal(err)
	}
	h := mw.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	const bound = 10_000

	flood := func(from, to int) (bad int) {
		w := &discard{h: http.Header{}}
		r, _ := http.NewRequest("GET", "/api/search", nil)
		for i := from; i < to; i++ {
			clear(w.h)
			clear(r.Header)
			w.status = 0
			switch i % 3 {
			case 0:
				r.RemoteAddr = "198.51.100.1:1234"
				r.Header.Set("Authorization", "Bearer flood-key-"+strconv.Itoa(i))
			case 1:
				r.RemoteAddr = fmt.Sprintf("%d.%d.%d.%d:1234", 10+i>>24&0x7f, i>>16&0xff, i>>8&0xff, i&0xff)
			default:
				r.RemoteAddr = fmt.Sprintf("[2001:db8:%x:%x::1]:1234", i>>16, i&0xffff)
			}
			h.ServeHTTP(w, r)
			if w.status != 0 && w.status != http.StatusOK {
				bad++
			}
		}
		return bad
	}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}

	// Fill the store first: the heap of a full store is the baseline.
	if bad := flood(0, 3*bound); bad != 0 {
		t.Fatalf("%d requests refused", bad)
	}
	before := heap()
	start := time.Now()
	const workers = 2
	var wg sync.WaitGroup
	bad := make([]int, workers)
	per := (floodRequests - 3*bound) / workers
	for g := range workers {
		from := 3*bound + g*per
		wg.Go(func() { bad[g] = flood(from, from+per) })
	}
	most := 0
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for waiting := true; waiting; {
		select {
		case <-done:
			waiting = false
		case <-time.After(20 * time.Millisecond):
		}
		most = max(most, mem.Stats().Keys)
	}
	took := time.Since(start)
	after := heap()
	st := mem.Stats()
	t.Logf("%d requests from new clients in %v (%.0f/s with the race detector); store %+v, at most %d keys; heap in use %.1f MB with the store full, %.1f MB after the flood",
		floodRequests, took.Round(time.Millisecond), float64(floodRequests-3*bound)/took.Seconds(), st, most,
		float64(before)/(1<<20), float64(after)/(1<<20))
	for g := range workers {
		if bad[g] != 0 {
			t.Errorf("worker %d: %d requests refused", g, bad[g])
		}
	}
	if most > bound || st.Keys > bound {
		t.Errorf("the store held %d keys (%d at the end), bound %d", most, st.Keys, bound)
	}
	if st.Evictions+st.Expirations+int64(st.Keys) != 2*3*bound+2*int64(workers*per) {
		t.Errorf("keys held %d + evicted %d + expired %d != %d states created", st.Keys, st.Evictions, st.Expirations, 2*(3*bound+workers*per))
	}
	if after > before+16<<20 {
		t.Errorf("heap in use grew from %.1f to %.1f MB during the flood", float64(before)/(1<<20), float64(after)/(1<<20))
	}
}
