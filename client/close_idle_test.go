package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.uber.org/goleak"

	"github.com/sluice-dev/sluice/client"
)

// A Client made without WithHTTPClient owns a connection pool (a clone of
// http.DefaultTransport): CloseIdleConnections releases it, so that a
// program replacing its Client (a reload) leaves no connection, and no
// goroutine, behind.
func TestCloseIdleConnectionsReleasesTheClientsPool(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"allowed":true,"identity":"user","cost":1,"remaining":1000}`))
	}))
	defer srv.Close()
	before := goleak.IgnoreCurrent()

	c := client.New(srv.URL)
	if _, err := c.Check(context.Background(), client.CheckRequest{Subject: "s"}); err != nil {
		t.Fatal(err)
	}
	c.CloseIdleConnections()
	if err := goleak.Find(before); err != nil {
		t.Errorf("goroutines left after CloseIdleConnections: %v", err)
	}
	var zero client.Client
	zero.CloseIdleConnections() // no pool: nothing to do
}
