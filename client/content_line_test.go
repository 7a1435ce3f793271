package client_test

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/client"
)

// An upload waiting for a quota of content bytes does not hold the
// requests behind it that send no content: a GET, which the quota of
// bytes does not count and the host's requests have room for, goes at
// once. Before, it lined up behind the upload and waited as long, here
// beyond its deadline.
func TestAnUploadWaitingForBytesDoesNotHoldRequestsWithoutContent(t *testing.T) {
	var mu sync.Mutex
	var spent int64
	tr := &client.Transport{Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		var n int64
		if r.Body != nil {
			n, _ = io.Copy(io.Discard, r.Body)
			r.Body.Close()
		}
		mu.Lock()
		spent += n
		left := max(1000-spent, 0)
		mu.Unlock()
		h := http.Header{}
		h.Set("RateLimit-Policy", `"upload";q=1000;w=3600;qu="content-bytes", "calls";q=100;w=3600`)
		h.Set("RateLimit", `"upload";r=`+strconv.FormatInt(left, 10)+`;t=2, "calls";r=90;t=2`)
		return &http.Response{StatusCode: http.StatusOK, Header: h, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
	})}
	if err := post(tr, time.Second, strings.Repeat("x", 900), false); err != nil {
		t.Fatalf("first upload: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	waiting := make(chan struct{})
	go func() {
		defer close(waiting)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://uploads.example/files", strings.NewReader(strings.Repeat("y", 500)))
		if resp, err := tr.RoundTrip(req); err == nil {
			resp.Body.Close()
		}
	}()
	defer func() { cancel(); <-waiting }()
	time.Sleep(100 * time.Millisecond) // the upload is waiting for the quota's reset, 2 s away
	getCtx, getCancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer getCancel()
	req, _ := http.NewRequestWithContext(getCtx, http.MethodGet, "http://uploads.example/files", nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("a GET while an upload waits for content bytes: %v; want it sent at once", err)
	}
	resp.Body.Close()
}
