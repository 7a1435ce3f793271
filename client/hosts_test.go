package client

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

type hostsRoundTrip func(*http.Request) (*http.Response, error)

func (f hostsRoundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestHostsRememberedStayBoundedWhenManyAreCalledWithinAMinute(t *testing.T) {
	// A crawler calls more hosts in a minute than a Transport remembers.
	entered, release := make(chan struct{}), make(chan struct{})
	tr := &Transport{Base: hostsRoundTrip(func(r *http.Request) (*http.Response, error) {
		if r.URL.Host == "slow.example" {
			close(entered)
			<-release
		}
		h := http.Header{}
		h.Set("RateLimit", `"a";r=5;t=1`)
		return &http.Response{StatusCode: http.StatusOK, Header: h, Body: http.NoBody, Request: r}, nil
	})}
	busy, _ := http.NewRequest(http.MethodGet, "http://busy.example/", nil)
	// A request under way all along keeps its host.
	slow, _ := http.NewRequest(http.MethodGet, "http://slow.example/", nil)
	slowDone := make(chan error)
	go func() {
		resp, err := tr.RoundTrip(slow)
		if err == nil {
			resp.Body.Close()
		}
		slowDone <- err
	}()
	<-entered
	for i := range 5 * maxHosts {
		req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("http://h%d.example/", i), nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if i%100 == 0 {
			// One host called all along keeps what it learned.
			resp, err := tr.RoundTrip(busy)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
	}
	tr.mu.Lock()
	n, kept, slowKept := len(tr.hosts), tr.hosts["busy.example"] != nil, tr.hosts["slow.example"] != nil
	tr.mu.Unlock()
	close(release)
	if err := <-slowDone; err != nil {
		t.Fatal(err)
	}
	if !slowKept {
		t.Error("the host of a request under way was forgotten")
	}
	if n > maxHosts {
		t.Errorf("%d hosts remembered after calling %d, want at most %d", n, 5*maxHosts, maxHosts)
	}
	if !kept {
		t.Error("the host called all along was forgotten")
	}
}

func TestHostsRememberedStayBoundedWhenEachAsksForALongWait(t *testing.T) {
	// Hostile hosts (or one that redirects a crawler to ever new names)
	// each answer 429 with a Retry-After of a day: their holds must not
	// make the Transport remember every one of them.
	tr := &Transport{Base: hostsRoundTrip(func(r *http.Request) (*http.Response, error) {
		h := http.Header{}
		h.Set("Retry-After", "86400")
		return &http.Response{StatusCode: http.StatusTooManyRequests, Header: h, Body: http.NoBody, Request: r}, nil
	})}
	for i := range 5 * maxHosts {
		req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("http://h%d.example/", i), nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	tr.mu.Lock()
	n := len(tr.hosts)
	tr.mu.Unlock()
	if n > maxHosts {
		t.Errorf("%d hosts remembered after %d answered with long holds, want at most %d", n, 5*maxHosts, maxHosts)
	}
	// The host called last still holds its Retry-After.
	req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("http://h%d.example/", 5*maxHosts-1), nil)
	if _, err := tr.RoundTrip(req); !errors.Is(err, ErrWaitTooLong) {
		t.Errorf("the last host's hold was forgotten: %v, want ErrWaitTooLong", err)
	}
}

// TestHostsAreOneWhateverTheirSpelling: a host written in capitals, with
// its scheme's default port or a port's leading zeros, with the root's
// dot of a fully qualified name, in Unicode or in its xn-- form, or
// called over http:// and https:// alike, is the host: what one spelling
// learns (its quota spent until a reset an hour away) holds every other,
// so that together they cannot overshoot the server's quota, which is the
// client's whichever way it comes. An IP address is written one way
// (2001:db8::1, and an IPv4-mapped one as the IPv4 address). Other ports
// are other hosts; IPv6 literals keep their brackets.
func TestHostsAreOneWhateverTheirSpelling(t *testing.T) {
	var sent []string
	tr := &Transport{Base: hostsRoundTrip(func(r *http.Request) (*http.Response, error) {
		sent = append(sent, r.URL.String())
		h := http.Header{}
		h.Set("RateLimit", `"a";r=0;t=3600`)
		return &http.Response{StatusCode: http.StatusOK, Header: h, Body: http.NoBody, Request: r}, nil
	})}
	for _, spellings := range [][]string{
		{"https://API.example.com/a", "https://api.example.com/b", "https://api.example.com:443/c", "https://Api.Example.COM:443/d"},
		{"http://api.example.com:8443/a", "http://API.EXAMPLE.COM:8443/b"},
		{"http://www.example.com/a", "http://www.example.com:80/b", "http://WWW.example.com:80/c", "http://www.example.com:0080/d", "http://www.example.com:/e"},
		{"http://zeros.example.com:8080/a", "http://zeros.example.com:08080/b"},
		{"https://[2001:DB8::1]/a", "https://[2001:db8::1]:443/b", "https://[2001:db8:0:0:0::1]/c", "https://[2001:0db8::0001]/d"},
		{"http://192.0.2.7:8080/a", "http://[::ffff:192.0.2.7]:8080/b", "http://[::FFFF:c000:207]:8080/c"},
		{"https://[2001:db8::1]:8443/a", "https://[2001:DB8::1]:8443/b"},
		{"http://plain.example.com/a", "https://plain.example.com/b", "https://plain.example.com:443/c", "http://plain.example.com:80/d"},
		{"https://fqdn.example.com/a", "https://fqdn.example.com./b", "https://FQDN.example.com.:443/c", "http://fqdn.example.com./d"},
		{"http://fqdn.example.com:8080/a", "http://fqdn.example.com.:8080/b"},
		{"https://bücher.example/a", "https://xn--bcher-kva.example/b", "https://BÜCHER.example./c", "https://XN--BCHER-KVA.example:443/d"},
	} {
		for i, u := range spellings {
			req, _ := http.NewRequest(http.MethodGet, u, nil)
			n := len(sent)
			resp, err := tr.RoundTrip(req)
			if i == 0 {
				if err != nil || len(sent) != n+1 {
					t.Fatalf("%s, the first of its host: %v, sent %d; want it sent", u, err, len(sent)-n)
				}
				resp.Body.Close()
				continue
			}
			if !errors.Is(err, ErrWaitTooLong) || len(sent) != n {
				t.Errorf("%s after %s spent the quota until its reset in an hour: %v, sent %d; want ErrWaitTooLong, nothing sent", u, spellings[0], err, len(sent)-n)
			}
		}
	}
}

func TestHostKeyIsTheHostInLowerCaseWithoutItsSchemesDefaultPort(t *testing.T) {
	for raw, want := range map[string]string{
		"https://API.Example.com:443/x":  "api.example.com",
		"http://API.Example.com:80/x":    "api.example.com",
		"http://api.example.com:443/x":   "api.example.com:443",
		"https://api.example.com:80/x":   "api.example.com:80",
		"https://[2001:DB8::1]:443/x":    "[2001:db8::1]",
		"http://[2001:DB8::1]:8080/x":    "[2001:db8::1]:8080",
		"http://[FE80::1%25En0]:80/x":    "[fe80::1%En0]",
		"http://192.0.2.7:8080/x":        "192.0.2.7:8080",
		"https://API.example.com./x":     "api.example.com",
		"http://api.example.com.:80/x":   "api.example.com",
		"http://api.example.com.:81/x":   "api.example.com:81",
		"http://localhost./x":            "localhost",
		"https://Bücher.example/x":       "xn--bcher-kva.example",
		"https://api.example.com:0443/x": "api.example.com",
		"http://api.example.com:08080/x": "api.example.com:8080",
		"http://api.example.com:/x":      "api.example.com",
		"http://[2001:db8:0::1]:8080/x":  "[2001:db8::1]:8080",
		"http://[::ffff:192.0.2.7]/x":    "192.0.2.7",
		"http://[fe80:0::1%25en0]/x":     "[fe80::1%en0]",
		"http://bücher.example:8080/x":   "xn--bcher-kva.example:8080",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := hostKey(u); got != want {
			t.Errorf("hostKey(%s) = %q, want %q", raw, got, want)
		}
	}
}

// A Transport that calls more hosts (or partitions of a host) than it
// remembers forgets idle ones, but not before those whose quota it knows
// to be spent: a host forgotten with its quota spent would be sent a probe
// at once, to meet the 429 its answer had announced. Such a host is
// forgotten only after every one that holds nothing, as one held by a
// Retry-After is.
func TestAHostWhoseQuotaIsSpentIsForgottenAfterThoseThatHoldNothing(t *testing.T) {
	spent := 0
	tr := &Transport{
		Partition: func(r *http.Request) string { return r.Header.Get("X-Tenant") },
		Base: hostsRoundTrip(func(r *http.Request) (*http.Response, error) {
			h := http.Header{}
			if r.Header.Get("X-Tenant") == "spent" {
				spent++
				h.Set("RateLimit", `"per-hour";r=0;t=3600`)
			}
			return &http.Response{StatusCode: http.StatusOK, Header: h, Body: http.NoBody, Request: r}, nil
		}),
	}
	send := func(tenant string) error {
		req, _ := http.NewRequest(http.MethodGet, "http://api.example/", nil)
		req.Header.Set("X-Tenant", tenant)
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := send("spent"); err != nil {
		t.Fatal(err)
	}
	for i := range 2 * maxHosts {
		if err := send(fmt.Sprint("t", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := send("spent"); !errors.Is(err, ErrWaitTooLong) || spent != 1 {
		t.Errorf("the tenant whose quota is spent for an hour, after %d others: %v, sent %d times; want ErrWaitTooLong, sent once", 2*maxHosts, err, spent)
	}
}

// Transport's doc: "Only hosts with requests under way are never
// forgotten", and a request whose body is still being read is under way
// after RoundTrip has returned: it holds its slot of a concurrency quota
// however long it lasts. A partition whose only slot a streaming body
// holds is not forgotten when a job calls more partitions than the
// Transport remembers: its next request waits for the slot
// (ErrWaitTooLong after MaxWait), rather than going as a fresh host's
// probe into the server's refusal while the stream is still open.
func TestAPartitionWhoseSlotAStreamHoldsIsNotForgotten(t *testing.T) {
	sent := 0
	tr := &Transport{
		Partition: func(r *http.Request) string { return r.Header.Get("X-Tenant") },
		Retry:     RetryPolicy{MaxWait: 200 * time.Millisecond, MaxRetries: -1},
		Base: hostsRoundTrip(func(r *http.Request) (*http.Response, error) {
			h := http.Header{}
			h.Set("RateLimit-Policy", `"in-flight";q=1;qu="concurrent-requests"`)
			h.Set("RateLimit", `"in-flight";r=0`)
			if r.Header.Get("X-Tenant") != "streaming" {
				return &http.Response{StatusCode: http.StatusOK, Header: h, Body: http.NoBody, Request: r}, nil
			}
			sent++
			status := http.StatusOK
			if sent > 1 {
				status = http.StatusTooManyRequests // the stream still holds the one slot
				h.Set("Retry-After", "1")
			}
			return &http.Response{StatusCode: status, Header: h, ContentLength: -1,
				Body: io.NopCloser(strings.NewReader("an event stream that goes on")), Request: r}, nil
		}),
	}
	send := func(tenant string) (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodGet, "http://api.example/", nil)
		req.Header.Set("X-Tenant", tenant)
		return tr.RoundTrip(req)
	}
	stream, err := send("streaming")
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close() // never read to its end while the test runs
	for i := range 2 * maxHosts {
		resp, err := send(fmt.Sprint("t", i))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	resp, err := send("streaming")
	status := 0
	if err == nil {
		status = resp.StatusCode
		resp.Body.Close()
	}
	if sent != 1 || !errors.Is(err, ErrWaitTooLong) {
		t.Errorf("a request of the partition whose one slot a stream still holds, after %d other partitions: %d sends in all (status %d, %v); want it held for the slot (ErrWaitTooLong after MaxWait), not sent into the refusal", 2*maxHosts, sent, status, err)
	}
}
