package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/client"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// limitedAPI stands in for an API limited to 20 requests a second with a
// burst of 5 per client (sluice's middleware in front of it), which tells
// its clients so in RateLimit headers. stop shuts it down.
func limitedAPI() (api *httptest.Server, stop func()) {
	store := memory.New()
	m, err := httplimit.New(sluice.NewLimiter(store), httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.GCRA(20, time.Second).WithBurst(5)}}},
	})
	if err != nil {
		log.Fatal(err)
	}
	api = httptest.NewServer(m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	return api, func() { api.Close(); store.Close() }
}

// A batch job sends 40 requests from 8 goroutines to an API limited to 20
// a second (burst 5). Its Transport learns the limit from the first
// answers and paces the rest at the API's rate: no request is refused, and
// the batch takes about burst + (40 − 5)/20 s, 1.75 s.
func ExampleTransport() {
	api, stop := limitedAPI()
	defer stop()
	wire := &countingTransport{base: http.DefaultTransport}
	hc := &http.Client{Transport: &client.Transport{Base: wire}}

	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < 40; i += 8 {
				resp, err := hc.Get(fmt.Sprintf("%s/items/%d", api.URL, i))
				if err != nil {
					log.Fatal(err)
				}
				resp.Body.Close()
				mu.Lock()
				statuses[resp.StatusCode]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	fmt.Println("statuses:", statuses)
	fmt.Println("sent:", wire.sent.Load(), "429s on the wire:", wire.tooMany.Load())
	// Output:
	// statuses: map[200:40]
	// sent: 40 429s on the wire: 0
}

// A Gate of the client's own paces calls evenly, whatever the server says:
// a leaky-bucket queue of 10 a second sends one call every 100 ms.
func ExampleNewLocalGate() {
	gate := client.NewLocalGate(sluice.LeakyBucket(10, time.Second).WithBurst(1).WithMaxWait(time.Minute))
	start := time.Now()
	for range 5 {
		if err := gate.Wait(context.Background(), 1); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println("5 calls took at least 400ms:", time.Since(start) >= 400*time.Millisecond)
	// Output: 5 calls took at least 400ms: true
}

// exampleSluice stands in for a running sluice serve: its admin listener,
// where a caller with the token "example-token" may ask for decisions
// (token_sha256 is the token's SHA-256, as sluice token prints it). stop
// shuts it down.
func exampleSluice() (admin *httptest.Server, stop func()) {
	cfg, err := config.Parse("example.yaml", []byte(`
plans:
  free:
    limits:
      - {name: per-minute, algorithm: gcra, quantity: 2, window: 1m}
admin:
  callers:
    - {name: batch-jobs, token_sha256: 4d1566a1d7df42a8517456d60ea06ed284e535cfe4c956aa6ee172dbcdf945f7, scopes: [check]}
`))
	if err != nil {
		log.Fatal(err)
	}
	store := memory.New()
	srv, err := server.New(server.Options{Config: cfg, Store: store, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		log.Fatal(err)
	}
	admin = httptest.NewServer(srv.AdminHandler())
	return admin, func() { admin.Close(); store.Close() }
}

// A service asks a sluice server whether a client may proceed.
func ExampleClient_Check() {
	sluiceAdmin, stop := exampleSluice()
	defer stop()
	c := client.New(sluiceAdmin.URL, client.WithToken("example-token"))
	for range 3 {
		d, err := c.Check(context.Background(), client.CheckRequest{APIKey: "k-123", Method: "POST", Path: "/api/generate"})
		if err != nil {
			log.Fatal(err) // errors.Is(err, sluice.ErrStoreUnavailable): apply your own fallback
		}
		if d.Allowed {
			fmt.Printf("allowed by %s, %d left\n", d.Limit, d.Remaining)
		} else {
			fmt.Printf("refused by %s, retry in %v\n", d.Limit, d.Wait().Round(time.Second))
		}
	}
	// Output:
	// allowed by per-minute, 1 left
	// allowed by per-minute, 0 left
	// refused by per-minute, retry in 30s
}

// Workers in many processes share one budget through a sluice server: each
// asks the decision API before calling the partner's API.
func ExampleClient_Gate() {
	sluiceAdmin, stop := exampleSluice()
	defer stop()
	partner := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer partner.Close()

	budget := client.New(sluiceAdmin.URL, client.WithToken("example-token")).Gate(client.CheckRequest{Subject: "partner-api"})
	hc := &http.Client{Transport: &client.Transport{Gate: budget}}
	for range 2 {
		resp, err := hc.Get(partner.URL + "/v2/orders")
		if err != nil {
			log.Fatal(err)
		}
		resp.Body.Close()
		fmt.Println(resp.Status)
	}
	// A third call would wait 30 s for the budget: within a deadline of
	// one second, the Gate says so at once instead of waiting.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, partner.URL+"/v2/orders", nil)
	_, err := hc.Do(req)
	fmt.Println(errors.Is(err, client.ErrWaitTooLong))
	// Output:
	// 200 OK
	// 200 OK
	// true
}

func ExampleParseRateLimit() {
	h := http.Header{}
	h.Set("RateLimit-Policy", `"per-minute";q=100;w=60, "per-day";q=1000;w=86400`)
	h.Set("RateLimit", `"per-minute";r=42;t=18, "per-day";r=7;t=40000`)
	rl, ok := client.ParseRateLimit(h, time.Now())
	fmt.Println(ok, rl.Format, rl.Policy, rl.Remaining, "of", rl.Limit, "left, back in", rl.Reset)
	// Output: true ietf per-day 7 of 1000 left, back in 11h6m40s
}
