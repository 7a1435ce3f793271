package migrate_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportOfTheWrongFormatSaysWhichItLooksLike: a file imported as a
// format it is not fails with that format's parse error (a YAML decoder's
// "cannot unmarshal !!str into migrate.kongFile" for an nginx.conf read as
// Kong); the error also names the format the file looks like.
func TestImportOfTheWrongFormatSaysWhichItLooksLike(t *testing.T) {
	const nginx = `http {
    limit_req_zone $binary_remote_addr zone=one:10m rate=1r/s;
    server { location / { limit_req zone=one; } }
}
`
	const kong = `_format_version: "3.0"
plugins:
  - name: rate-limiting
    config: {minute: 5}
`
	for _, c := range []struct{ as, src, looks string }{
		{"kong", nginx, "nginx"},
		{"traefik", nginx, "nginx"},
		{"aws-apigateway", nginx, "nginx"},
		{"nginx", kong, "kong"},
		{"haproxy", kong, "kong"},
	} {
		_, err := migrate.Import(c.as, c.src, "file")
		if err == nil {
			t.Errorf("a %s file imported as %s", c.looks, c.as)
			continue
		}
		if want := "the file looks like " + c.looks; !strings.Contains(err.Error(), want) {
			t.Errorf("a %s file imported as %s: %q does not say %q", c.looks, c.as, err, want)
		}
	}
}
