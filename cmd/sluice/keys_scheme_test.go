package main

import (
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// An -admin of the wrong scheme, http:// for a listener with admin.tls or
// https:// for one without, is an error that says which scheme to give
// -admin, not only Go's or the listener's words for it.
func TestKeysSaysWhichSchemeTheListenerWants(t *testing.T) {
	tlsSrv := httptest.NewUnstartedServer(http.NotFoundHandler())
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0)
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	plain := httptest.NewServer(http.NotFoundHandler())
	defer plain.Close()
	for _, c := range []struct{ admin, want string }{
		{strings.Replace(tlsSrv.URL, "https://", "http://", 1), "the admin listener serves https (admin.tls): -admin " + tlsSrv.URL},
		{strings.Replace(plain.URL, "http://", "https://", 1), "the admin listener serves plain http (no admin.tls): -admin " + plain.URL},
	} {
		err := runKeys(context.Background(), []string{"-admin", c.admin, "top"}, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("-admin %s: %v, want it to say %q", c.admin, err, c.want)
		}
	}
}
