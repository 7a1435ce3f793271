package main

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/sluice-dev/sluice/internal/redact"
)

// withSchemeHint returns err, an answer or failure of the admin listener
// at admin, with the -admin to give when it shows the wrong scheme: a 400
// that Go's https server answers a plain http request with, or the plain
// http answer to a TLS handshake. Other errors are returned as they are.
func withSchemeHint(err error, admin string) error {
	var refused *adminError
	switch {
	case strings.HasPrefix(admin, "http://") && errors.As(err, &refused) && refused.status == http.StatusBadRequest &&
		strings.Contains(refused.text, "Client sent an HTTP request to an HTTPS server"):
		return fmt.Errorf("%w (the admin listener serves https (admin.tls): -admin %s)", err, redact.URL("https://"+strings.TrimPrefix(admin, "http://")))
	case strings.HasPrefix(admin, "https://") && strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return fmt.Errorf("%w (the admin listener serves plain http (no admin.tls): -admin %s)", err, redact.URL("http://"+strings.TrimPrefix(admin, "https://")))
	}
	return err
}
