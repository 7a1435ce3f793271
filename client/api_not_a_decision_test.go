package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/sluice-dev/sluice"
)

// A 200 whose body is JSON but no decision (a base URL that reaches some
// other service, a proxy's or health page's {"status":"ok"}, a bare null)
// is "an answer that is not a decision": docs/client.md's "garbled answer:
// your fallback", an error wrapping sluice.ErrStoreUnavailable — never a
// refusal with Wait() sluice.Never, which would make an APIGate fail with
// ErrExceedsBurst and keep FailOpen from applying.
func TestAJSONAnswerWithoutAllowedIsNoDecision(t *testing.T) {
	for _, body := range []string{`{"status":"ok"}`, `{}`, `null`} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(body))
		}))
		d, err := New(srv.URL).Check(context.Background(), CheckRequest{User: "u"})
		srv.Close()
		if !errors.Is(err, sluice.ErrStoreUnavailable) {
			t.Errorf("200 %s: decision %+v (Wait %v), error %v; want an error wrapping ErrStoreUnavailable", body, d, d.Wait(), err)
		}
	}
}
