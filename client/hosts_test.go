package client

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
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
