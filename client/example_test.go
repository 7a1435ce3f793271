package client_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/client"
)

// A batch job that calls an API at most 50 times a second, evenly spaced,
// and otherwise stays within whatever limits the API's headers announce.
func ExampleTransport() {
	hc := &http.Client{Transport: &client.Transport{
		Gate: client.NewLocalGate(sluice.LeakyBucket(50, time.Second).WithBurst(1).WithMaxWait(time.Minute)),
	}}
	for id := range 1000 {
		resp, err := hc.Get(fmt.Sprintf("https://api.example.com/items/%d", id))
		if err != nil {
			log.Fatal(err)
		}
		resp.Body.Close()
	}
}

// Workers in many processes share one budget through a sluice server: each
// asks the decision API before calling the partner's API.
func ExampleClient_Gate() {
	sluiceServer := client.New("http://sluice:9090", client.WithToken(os.Getenv("SLUICE_TOKEN")))
	hc := &http.Client{Transport: &client.Transport{
		Gate: sluiceServer.Gate(client.CheckRequest{Subject: "partner-api"}),
	}}
	resp, err := hc.Get("https://partner.example.com/v2/orders")
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
}

func ExampleClient_Check() {
	c := client.New("http://sluice:9090", client.WithToken(os.Getenv("SLUICE_TOKEN")))
	d, err := c.Check(context.Background(), client.CheckRequest{APIKey: "k-123", Method: "POST", Path: "/api/generate"})
	if err != nil {
		log.Fatal(err) // errors.Is(err, sluice.ErrStoreUnavailable): apply your own fallback
	}
	if !d.Allowed {
		fmt.Printf("refused by %s, retry in %v\n", d.Limit, d.Wait())
	}
}

func ExampleParseRateLimit() {
	h := http.Header{}
	h.Set("RateLimit-Policy", `"per-minute";q=100;w=60, "per-day";q=1000;w=86400`)
	h.Set("RateLimit", `"per-minute";r=42;t=18, "per-day";r=7;t=40000`)
	rl, ok := client.ParseRateLimit(h, time.Now())
	fmt.Println(ok, rl.Format, rl.Policy, rl.Remaining, "of", rl.Limit, "left, back in", rl.Reset)
	// Output: true ietf per-day 7 of 1000 left, back in 11h6m40s
}
