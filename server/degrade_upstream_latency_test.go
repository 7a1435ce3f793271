package server_test

import (
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/degrade"
	"github.com/sluice-dev/sluice/internal/testpki"
	"github.com/sluice-dev/sluice/server"
)

// latencyServer serves limits (a plans section) in front of an upstream
// that answers at once, with a level entered at a p99 of 2 s; the test
// samples itself (SampleNow), from a window of its own requests alone.
// The upstream runs in the test's process: on a loaded machine its
// latency, and the proxy's between two reads of a body, are the process's
// wait for a core, which passed 1 s at the p99 of many requests at once
// (under -race, on a machine loaded far beyond its cores); the tests
// below keep what they guard against (a queue's wait, a client's upload)
// well above 2 s.
func latencyServer(t *testing.T, limits string, upstream http.HandlerFunc) (*server.Server, string) {
	t.Helper()
	up := httptest.NewServer(upstream)
	t.Cleanup(up.Close)
	srv, l := serveYAML(t, "upstream: "+up.URL+"\n"+limits+`
degradation:
  interval: 30s
  min_dwell: 30s
  levels:
    elevated: {enter: {p99: 2s}, leave: {p99: 1s}}
`+testAdmin)
	base := "http://" + l.public
	srv.SampleNow()
	return srv, base
}

// sendAll sends n requests made by req at once and returns their statuses.
func sendAll(t *testing.T, n int, req func() *http.Request) map[int]int {
	tr := &http.Transport{MaxIdleConnsPerHost: n}
	t.Cleanup(tr.CloseIdleConnections)
	hc := &http.Client{Transport: tr}
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := hc.Do(req())
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			mu.Lock()
			statuses[resp.StatusCode]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	return statuses
}

// The p99 signal is the upstream's latency (README, examples/sluice.yaml),
// and in_flight the requests sent on to it whose answer has not started.
// A request a leaky-bucket queue admits with a delay waits that delay in
// sluice, before it goes to the upstream: neither its wait nor its place
// in the queue is the upstream's. Otherwise one client's burst into its
// own queued limit, with an upstream that answers at once, would read as
// a p99 of its max_wait and raise the level for every client, and at that
// level the reduced limits would queue it longer still.
func TestAQueuedRequestsWaitIsNotTheUpstreamsLatency(t *testing.T) {
	srv, base := latencyServer(t, `plans:
  free:
    limits:
      - {name: queued, algorithm: leaky-bucket, quantity: 50, window: 1s, burst: 1, max_wait: 5s}
`, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })

	// 200 requests at once: the queue admits them 20 ms apart, the last
	// after about 4 s (a p99 of about 4 s if their waits counted).
	queued := make(chan int64, 1)
	go func() {
		time.Sleep(500 * time.Millisecond)
		srv.SampleNow() // about 175 requests still queued
		queued <- srv.Degradation().Signals.InFlight
	}()
	statuses := sendAll(t, 200, func() *http.Request {
		req, _ := http.NewRequest("GET", base+"/api/items", nil)
		return req
	})
	if statuses[200] < 190 {
		t.Fatalf("statuses %v: fewer than 190 answers, the premise failed", statuses)
	}
	if n := <-queued; n > 50 {
		t.Errorf("in flight, with most of 200 requests in sluice's own queue: %d; want the upstream's few", n)
	}
	if l := srv.SampleNow(); l != degrade.Normal {
		t.Errorf("an upstream answering at once, one client queued by its own limit: level %v, p99 read as %v; want normal",
			l, srv.Degradation().Signals.P99)
	}
}

// slowBody sends n bytes, one every gap: an upload over a slow link, or a
// client-streaming call's messages.
type slowBody struct {
	n   int
	gap time.Duration
}

func (b *slowBody) Read(p []byte) (int, error) {
	if b.n == 0 {
		return 0, io.EOF
	}
	time.Sleep(b.gap)
	b.n--
	p[0] = 'x'
	return 1, nil
}

// The time a client takes to send its request's body (a slow mobile
// upload, a client-streaming call, a stranger trickling bytes within
// read_timeout) is not the upstream's latency, from which the proxy's waits
// on the client's body are taken out: an upstream that answers the moment
// it has the body is not slow, as nginx's upstream time leaves out the
// upload of a body it buffers. An open request stream is no more the
// upstream's load than an open answer stream.
func TestAClientsSlowUploadIsNotTheUpstreamsLatency(t *testing.T) {
	srv, base := latencyServer(t, `plans:
  free:
    limits:
      - {name: per-second, algorithm: gcra, quantity: 100000, window: 1s}
`, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Write([]byte("ok")) // the moment the body is in
	})

	// 120 uploads, each sending its 5 bytes over 3 s (a p99 of 3 s if
	// the upload counted; few reads, few of the proxy's waits between).
	statuses := sendAll(t, 120, func() *http.Request {
		req, _ := http.NewRequest("POST", base+"/api/uploads", &slowBody{n: 5, gap: 600 * time.Millisecond})
		return req
	})
	if statuses[200] < 110 {
		t.Fatalf("statuses %v: fewer than 110 answers, the premise failed", statuses)
	}
	if l := srv.SampleNow(); l != degrade.Normal {
		t.Errorf("an upstream answering the moment each body is in: level %v, p99 read as %v; want normal",
			l, srv.Degradation().Signals.P99)
	}
}

// An upstream slow to take a request's body (its workers busy, a lookup
// before it reads: its own queue) is slow, however fast the client sent
// the body: the time between the proxy's reads of the body is the
// upstream's backpressure, and only the time spent waiting inside a read
// is the client's. As nginx's upstream time counts the sending of a
// buffered body, an upstream that holds each 8 MiB body 1.5 s before it
// reads it reads as 1.5 s, though its reads come when it is almost done.
func TestAnUpstreamSlowToTakeTheBodyIsSlow(t *testing.T) {
	srv, base := latencyServer(t, `plans:
  free:
    limits:
      - {name: per-second, algorithm: gcra, quantity: 100000, window: 1s}
`, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(1500 * time.Millisecond) // the upstream's own wait, before it reads
		io.Copy(io.Discard, r.Body)
		w.Write([]byte("ok"))
	})
	body := bytes.Repeat([]byte("x"), 8<<20)
	statuses := sendAll(t, 3, func() *http.Request {
		req, _ := http.NewRequest("POST", base+"/api/uploads", bytes.NewReader(body)) // all of it at once
		return req
	})
	if statuses[200] != 3 {
		t.Fatalf("statuses %v: the premise failed", statuses)
	}
	srv.SampleNow()
	if p99 := srv.Degradation().Signals.P99; p99 < time.Second {
		t.Errorf("an upstream that held each request 1.5 s before taking its body (sent at once by the client): p99 %v; want at least 1s", p99)
	}
}

// slowAccept is an upstream's listener whose accept loop runs delay
// behind, as an overloaded server's backlog does.
type slowAccept struct {
	net.Listener
	delay time.Duration
}

func (l *slowAccept) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		time.Sleep(l.delay)
	}
	return c, err
}

// An upstream slow to take a connection (its backlog full) is slow: the
// proxy's dial, over TLS its handshake, is the upstream's latency, as
// nginx's upstream time counts connecting. An https upstream whose accept
// loop runs 1.5 s behind, answering a GET without a body the moment it
// has the connection, reads as 1.5 s, as it does over http://, where the
// request waits in the connection's buffers instead.
func TestAnUpstreamSlowToTakeAConnectionIsSlowOverTLS(t *testing.T) {
	ca := testpki.New(t, "upstream CA")
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok"))
	}))
	up.Listener = &slowAccept{Listener: up.Listener, delay: 1500 * time.Millisecond}
	up.TLS = &tls.Config{Certificates: []tls.Certificate{ca.Server(t, "upstream")}, MinVersion: tls.VersionTLS12}
	up.StartTLS()
	t.Cleanup(up.Close)
	srv, _ := loadServer(t, ca.Dir, "upstream: "+up.URL+"\nupstream_tls: {ca_file: ca.pem}\n"+`
plans:
  anonymous:
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m}]
anonymous_plan: anonymous
degradation:
  interval: 30s
  min_dwell: 30s
  levels:
    elevated: {enter: {p99: 1s}, leave: {p99: 500ms}}
`)
	front := httptest.NewServer(srv.PublicHandler())
	t.Cleanup(front.Close)
	srv.SampleNow()
	resp, err := http.Get(front.URL + "/v1/items")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("%s: the premise failed", resp.Status)
	}
	srv.SampleNow()
	if p99 := srv.Degradation().Signals.P99; p99 < time.Second {
		t.Errorf("an https upstream that took 1.5 s to take the connection: p99 %v; want at least 1s", p99)
	}
}
