package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/client"
)

// A problem whose title and detail run to most of the megabyte the
// client reads (a proxy in front of sluice gone wrong, or a hostile one)
// is not carried whole into the error, and the log lines that print it:
// its fields are cut, as the start of any other body is.
func TestAnEnormousProblemMakesAShortError(t *testing.T) {
	long := strings.Repeat("é", 200_000) // two fields of 400 KB: the body fits in the megabyte read
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]string{"type": "about:blank", "title": long, "detail": long})
	}))
	defer srv.Close()
	_, err := client.New(srv.URL).Check(context.Background(), client.CheckRequest{User: "u1"})
	var apiErr *client.APIError
	if !errors.As(err, &apiErr) || !errors.Is(err, sluice.ErrInvalidCheck) {
		t.Fatalf("err %v; want an *APIError wrapping sluice.ErrInvalidCheck", err)
	}
	if n := len(err.Error()); n > 2048 {
		t.Errorf("the error is %d bytes long; want the problem's fields cut", n)
	}
	if !strings.HasPrefix(apiErr.Detail, "éé") || !strings.HasSuffix(apiErr.Detail, "…") {
		t.Errorf("Detail %.20q…; want its start, then an ellipsis", apiErr.Detail)
	}
}
