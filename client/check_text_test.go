package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/client"
)

// Check sends a CheckRequest's strings as they are, or not at all: one that
// is not UTF-8, which json.Marshal would send with U+FFFD for its bytes
// (so that "tenant-\xff" and "tenant-\xfe" would be one client to the
// server, charged together), is an error wrapping sluice.ErrInvalidCheck,
// returned before anything is sent. Headers' names and values too.
func TestCheckRefusesStringsThatAreNotUTF8(t *testing.T) {
	var sent atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent.Add(1)
		w.Write([]byte(`{"allowed":true,"identity":"external","cost":1,"remaining":1,"resetAfterMs":1}` + "\n"))
	}))
	defer srv.Close()
	c := client.New(srv.URL)
	for name, req := range map[string]client.CheckRequest{
		"subject":                 {Subject: "tenant-\xff"},
		"user, a surrogate coded": {User: "u\xed\xa0\x80"},
		"api_key":                 {APIKey: "k\xfe"},
		"token":                   {Token: "t\xc0\xaf"},
		"plan":                    {Subject: "s", Plan: "p\xff"},
		"path":                    {Subject: "s", Path: "/a\xff"},
		"a header's value":        {Subject: "s", Headers: map[string]string{"X-Tenant": "acme\xff"}},
		"a header's name":         {Subject: "s", Headers: map[string]string{"X-\xff": "acme"}},
	} {
		if _, err := c.Check(context.Background(), req); !errors.Is(err, sluice.ErrInvalidCheck) {
			t.Errorf("%s: %v, want an error wrapping sluice.ErrInvalidCheck", name, err)
		}
	}
	if n := sent.Load(); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
	if _, err := c.Check(context.Background(), client.CheckRequest{Subject: "tenant-é\ufffd😀"}); err != nil || sent.Load() != 1 {
		t.Errorf("a UTF-8 subject: %v, %d sent; want it sent", err, sent.Load())
	}
}
