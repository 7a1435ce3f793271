package migrate_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/migrate"
)

// A source whose limits sluice cannot check on one request (more than
// sluice.MaxChecks: 70 nginx zones in one location, or on 70 locations,
// which become rules that may all apply) is refused by Files with what to
// do, not written as a configuration that does not load. 60 zones are
// written, and load.
func TestFilesRefusesMoreLimitsThanOneRequestChecks(t *testing.T) {
	source := func(zones int, oneLocation bool) string {
		var b strings.Builder
		b.WriteString("http {\n")
		for i := range zones {
			fmt.Fprintf(&b, "    limit_req_zone $binary_remote_addr zone=z%d:1m rate=%dr/s;\n", i, i+1)
		}
		b.WriteString("    server {\n")
		if oneLocation {
			b.WriteString("        location /all/ {\n")
			for i := range zones {
				fmt.Fprintf(&b, "            limit_req zone=z%d;\n", i)
			}
			b.WriteString("        }\n")
		} else {
			for i := range zones {
				fmt.Fprintf(&b, "        location /p%d/ { limit_req zone=z%d; }\n", i, i)
			}
		}
		b.WriteString("    }\n}\n")
		return b.String()
	}
	for _, oneLocation := range []bool{true, false} {
		tr, err := migrate.Import("nginx", source(70, oneLocation), "nginx.conf")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tr.Files(true); err == nil || !strings.Contains(err.Error(), "more than the 64 sluice checks at once") {
			t.Errorf("70 zones (one location %v): Files error %v, want a refusal naming the bound", oneLocation, err)
		}
		tr, err = migrate.Import("nginx", source(60, oneLocation), "nginx.conf")
		if err != nil {
			t.Fatal(err)
		}
		files, err := tr.Files(true)
		if err != nil {
			t.Fatalf("60 zones (one location %v): %v", oneLocation, err)
		}
		if _, err := config.Parse(migrate.ConfigFile, []byte(files[migrate.ConfigFile])); err != nil {
			t.Errorf("60 zones (one location %v): the configuration does not load: %v", oneLocation, err)
		}
	}
}
