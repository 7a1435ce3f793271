package migrate_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// nginxStreamBlock is a stream block limiting a TCP server to 2
// connections at once per address.
const nginxStreamBlock = `stream {
  limit_conn_zone $binary_remote_addr zone=tcp:10m;
  server {
    listen 5432;
    limit_conn tcp 2;
    proxy_pass db:5432;
  }
}
`

// TestImportNginxStreamLimitsAreReported: nginx's stream module limits TCP
// and UDP connections (limit_conn_zone, limit_conn), which sluice does not
// see. The import reports a stream block's limits as not imported, naming
// them, and imports the http block's.
func TestImportNginxStreamLimitsAreReported(t *testing.T) {
	src := `http {
  limit_req_zone $binary_remote_addr zone=a:10m rate=10r/s;
  server {
    listen 80;
    location /api/ { limit_req zone=a burst=5 nodelay; }
  }
}
` + nginxStreamBlock
	tr, err := migrate.Import("nginx", src, "nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	reported := false
	for _, d := range tr.Differences {
		if d.Where == "line 8 stream" && !d.Same && strings.Contains(d.Text, "not imported") && strings.Contains(d.Text, "line 9: limit_conn_zone") && strings.Contains(d.Text, "line 12: limit_conn") {
			reported = true
		}
	}
	if !reported {
		t.Errorf("the stream block's limit_conn_zone tcp and limit_conn tcp 2 are not reported as not imported: %+v", tr.Differences)
	}
	if len(tr.Limits) != 1 || tr.Limits[0].Quantity != 10 {
		t.Errorf("the http block's limit_req: limits %+v, want one of 10 a second", tr.Limits)
	}
}

// TestImportNginxRefusesAFileOfStreamLimitsOnly: a file that uses no
// limit_req or limit_conn that sluice can import (none in an http block,
// a server or a prefix location) is refused, as a configuration limiting
// nothing would be taken for the source's, and the error names what it
// found instead: a stream block's limits, a regular-expression location's.
func TestImportNginxRefusesAFileOfStreamLimitsOnly(t *testing.T) {
	for _, c := range []struct {
		name, src, names string
	}{
		{"stream limits only", nginxStreamBlock, "stream: line 2: limit_conn_zone"},
		{"a regular-expression location's only", `http {
  limit_req_zone $binary_remote_addr zone=a:10m rate=10r/s;
  server {
    location ~ \.php$ { limit_req zone=a; }
  }
}
`, `location ~ \.php$: a regular-expression location`},
		{"no limits", "http {\n  server { listen 80; }\n}\n", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr, err := migrate.Import("nginx", c.src, "nginx.conf")
			if err == nil {
				files, _ := tr.Files(true)
				t.Fatalf("imported:\n%s", files[migrate.ConfigFile])
			}
			if !strings.Contains(err.Error(), "no limit_req or limit_conn") || !strings.Contains(err.Error(), c.names) {
				t.Errorf("error %q: want it to say no limit_req or limit_conn is imported, naming %q", err, c.names)
			}
		})
	}
}
