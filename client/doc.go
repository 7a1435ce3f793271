// Package client is the Go client side of sluice: a client of the decision
// API, and an http.RoundTripper that keeps outgoing calls within rate
// limits.
//
// Client asks a sluice server for decisions (POST /v1/check):
//
//	c := client.New("http://sluice:9090", client.WithToken(os.Getenv("SLUICE_TOKEN")))
//	d, err := c.Check(ctx, client.CheckRequest{APIKey: key, Method: "POST", Path: "/api/generate"})
//
// Transport limits what a program sends. It paces requests with a Gate (a
// limit of its own: in memory, on Redis, or a sluice server's), learns the
// server's quota from its RateLimit headers so that it stops before the
// server has to refuse, and on 429 or 503 waits as Retry-After and the
// headers say, with jittered exponential backoff when they say nothing,
// within a retry budget, retrying only requests that are safe to repeat:
//
//	hc := &http.Client{Transport: &client.Transport{
//		Gate: client.NewLocalGate(sluice.LeakyBucket(50, time.Second).WithBurst(1).WithMaxWait(time.Minute)),
//	}}
//
// docs/client.md explains the model and its guarantees.
package client
