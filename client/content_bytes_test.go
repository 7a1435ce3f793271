package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/client"
)

// byteQuota is a server whose quota counts the bytes of request content:
// RateLimit-Policy states q bytes an hour (qu="content-bytes"), and a
// request whose body does not fit what remains is refused with a 429. It
// records every attempt it was sent.
type byteQuota struct {
	mu       sync.Mutex
	q, spent int64
	attempts int
	refused  int
}

func (s *byteQuota) RoundTrip(r *http.Request) (*http.Response, error) {
	var n int64
	if r.Body != nil {
		n, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.attempts++
	status := http.StatusOK
	if s.spent+n > s.q {
		status = http.StatusTooManyRequests
		s.refused++
	} else {
		s.spent += n
	}
	h := http.Header{}
	h.Set("RateLimit-Policy", `"upload";q=`+strconv.FormatInt(s.q, 10)+`;w=3600;qu="content-bytes"`)
	h.Set("RateLimit", `"upload";r=`+strconv.FormatInt(s.q-s.spent, 10)+`;t=3600`)
	return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
}

func (s *byteQuota) counts() (attempts, refused int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.attempts, s.refused
}

// post sends body (of unknown length when chunked) to the byteQuota
// through tr within d.
func post(tr http.RoundTripper, d time.Duration, body string, chunked bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var r io.Reader = strings.NewReader(body)
	if chunked {
		r = io.MultiReader(r) // no length net/http knows: ContentLength -1
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://uploads.example/files", r)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return errors.New(resp.Status)
	}
	return nil
}

// A quota of content bytes counts each request's body, not the request:
// once 600 of 1,000 bytes an hour are spent, a second upload of 600 waits
// for the quota to come back (here, beyond the request's deadline, so it
// fails at once) instead of being sent to meet a 429, and a request
// without a body, which spends no bytes, is not held. Before, the upload
// counted as one request of the 400 left, went, and was refused.
func TestAContentBytesQuotaCountsTheBodysBytes(t *testing.T) {
	srv := &byteQuota{q: 1000}
	tr := &client.Transport{Base: srv}
	body := strings.Repeat("x", 600)
	if err := post(tr, time.Second, body, false); err != nil {
		t.Fatalf("first upload: %v", err)
	}
	err := post(tr, 200*time.Millisecond, body, false)
	if !errors.Is(err, client.ErrWaitTooLong) {
		t.Errorf("second upload of 600 bytes with 400 left: %v; want ErrWaitTooLong", err)
	}
	if err := post(tr, 200*time.Millisecond, "", false); err != nil {
		t.Errorf("a request without a body, 400 bytes left: %v; want it sent", err)
	}
	if attempts, refused := srv.counts(); attempts != 2 || refused != 0 {
		t.Errorf("the server saw %d attempts, %d refused; want 2, none refused", attempts, refused)
	}
}

// A body larger than the whole quota can never be admitted, whatever the
// wait: it is refused at once with an error wrapping ErrExceedsBurst that
// names the policy, without being sent, so that a batch job can split the
// upload rather than wait for a quota that never comes.
func TestABodyLargerThanTheWholeQuotaIsRefusedAtOnce(t *testing.T) {
	srv := &byteQuota{q: 1000}
	tr := &client.Transport{Base: srv}
	if err := post(tr, time.Second, "x", false); err != nil {
		t.Fatalf("first upload: %v", err)
	}
	start := time.Now()
	err := post(tr, time.Hour, strings.Repeat("x", 5000), false)
	if !errors.Is(err, client.ErrExceedsBurst) || !strings.Contains(err.Error(), `"upload"`) {
		t.Errorf("an upload of 5,000 bytes to a quota of 1,000: %v; want ErrExceedsBurst naming the policy", err)
	}
	if waited := time.Since(start); waited > time.Second {
		t.Errorf("refused after %v; want at once", waited)
	}
	if attempts, _ := srv.counts(); attempts != 1 {
		t.Errorf("the server saw %d attempts; want 1, the oversized upload never sent", attempts)
	}
}

// A body of unknown length (chunked) may be as large as the quota: it
// costs the whole quota, so it waits until the quota is whole again, and
// is then sent (it cannot wait for ever, nor be refused, since it may fit).
func TestABodyOfUnknownLengthCostsTheWholeQuota(t *testing.T) {
	srv := &byteQuota{q: 1000}
	tr := &client.Transport{Base: srv}
	if err := post(tr, time.Second, "x", false); err != nil {
		t.Fatalf("first upload: %v", err)
	}
	err := post(tr, 200*time.Millisecond, "yy", true)
	if !errors.Is(err, client.ErrWaitTooLong) {
		t.Errorf("a chunked upload with 999 of 1,000 bytes left: %v; want ErrWaitTooLong", err)
	}
	if attempts, _ := srv.counts(); attempts != 1 {
		t.Errorf("the server saw %d attempts; want 1", attempts)
	}
}

// A quota in a unit the client does not know (qu="tokens", as some APIs
// count model tokens) cannot be counted: its policy is ignored, not read
// as a quota of requests. Before, its r=0 held the host for its reset,
// a request a second at most for the rate its q and w state.
func TestAQuotaInAnUnknownUnitIsIgnored(t *testing.T) {
	tr := &client.Transport{Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		h := http.Header{}
		h.Set("RateLimit-Policy", `"tokens";q=100000;w=86400;qu="tokens"`)
		h.Set("RateLimit", `"tokens";r=0;t=3600`)
		return &http.Response{StatusCode: http.StatusOK, Header: h, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
	})}
	for i := range 3 {
		if err := post(tr, 500*time.Millisecond, "prompt", false); err != nil {
			t.Fatalf("request %d: %v; want it sent", i+1, err)
		}
	}
}

// A 429 whose RateLimit says that less remains than the request spends,
// without a Retry-After, says when it will fit: the quota's reset. An
// upload of 600 bytes refused with 300 of the quota left, t=2, is retried
// once, after two seconds. Before, only a quota stated spent to its last
// unit gave the reset; the retry was guessed with a backoff of at most a
// tenth of a second, held a second by the host, refused again, and sent a
// third time.
func TestARefusalWithTooLittleLeftIsRetriedAtTheReset(t *testing.T) {
	start := time.Now()
	var mu sync.Mutex
	attempts := 0
	tr := &client.Transport{Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		n, _ := io.Copy(io.Discard, r.Body)
		r.Body.Close()
		mu.Lock()
		attempts++
		mu.Unlock()
		h := http.Header{}
		h.Set("RateLimit-Policy", `"upload";q=1000;w=3600;qu="content-bytes"`)
		status, left := http.StatusOK, int64(1000)-n
		if time.Since(start) < 2*time.Second { // another client spent 700 bytes until then
			status, left = http.StatusTooManyRequests, 300
		}
		h.Set("RateLimit", `"upload";r=`+strconv.FormatInt(left, 10)+`;t=`+strconv.Itoa(max(int((2*time.Second-time.Since(start)+time.Second-1)/time.Second), 0)))
		return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
	})}
	req, _ := http.NewRequest(http.MethodPut, "http://uploads.example/files/1", strings.NewReader(strings.Repeat("x", 600)))
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	if resp.StatusCode != http.StatusOK || attempts != 2 {
		t.Errorf("status %d after %d attempts; want 200 after 2, the retry waiting for the reset", resp.StatusCode, attempts)
	}
}

// Uploads from eight goroutines to a fixed window of 1,000 content bytes
// a second, 100 bytes each, go ten a window: the Transport meets at most
// the one 429 a window costs (the first request sent on a rate it does
// not have) and the server never counts more than its quota in a window.
func TestConcurrentUploadsKeepWithinAQuotaOfContentBytes(t *testing.T) {
	var mu sync.Mutex
	windows := map[int64]int64{}
	refused := 0
	tr := &client.Transport{Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		n, _ := io.Copy(io.Discard, r.Body)
		r.Body.Close()
		now := time.Now()
		w := now.Unix()
		mu.Lock()
		status := http.StatusOK
		if windows[w]+n > 1000 {
			status = http.StatusTooManyRequests
			refused++
		} else {
			windows[w] += n
		}
		left := 1000 - windows[w]
		mu.Unlock()
		h := http.Header{}
		h.Set("RateLimit-Policy", `"upload";q=1000;w=1;qu="content-bytes"`)
		h.Set("RateLimit", `"upload";r=`+strconv.FormatInt(left, 10)+`;t=1`)
		if status != http.StatusOK {
			h.Set("Retry-After", "1")
		}
		return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
	}), Retry: client.RetryPolicy{RetryNonIdempotent: true}}
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				if err := post(tr, 30*time.Second, strings.Repeat("x", 100), false); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("upload: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d refused", refused)
	if refused > 2 {
		t.Errorf("%d uploads refused; want at most 2", refused)
	}
}
