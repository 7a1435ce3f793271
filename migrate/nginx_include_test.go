package migrate_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportNginxIncludes: the import reads one file, so what an include
// brings in is not imported. A file whose zones are used only in included
// files is refused, naming the include, rather than imported as limiting
// nothing; a file that limits on its own is imported, and each include,
// and each zone it leaves unused, is reported as a difference (not the
// stock files of MIME types and upstream parameters).
func TestImportNginxIncludes(t *testing.T) {
	_, err := migrate.Import("nginx", `http {
    limit_req_zone $binary_remote_addr zone=perip:1m rate=1r/s;
    include /etc/nginx/sites-enabled/*;
}
`, "nginx.conf")
	if err == nil || !strings.Contains(err.Error(), "line 3") || !strings.Contains(err.Error(), "/etc/nginx/sites-enabled/*") {
		t.Errorf("zones used only by included files: err = %v, want the include's line and files named", err)
	}

	tr, err := migrate.Import("nginx", `http {
    limit_req_zone $binary_remote_addr zone=perip:1m rate=1r/s;
    limit_req_zone $binary_remote_addr zone=login:1m rate=1r/m;
    limit_req zone=perip burst=5 nodelay;
    include conf.d/*.conf;
    include /etc/nginx/mime.types;
}
`, "nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	if !reported(tr, "conf.d/*.conf") {
		t.Errorf("the include is not reported: %+v", tr.Differences)
	}
	if reported(tr, "mime.types") {
		t.Errorf("mime.types, which holds no limits, is reported: %+v", tr.Differences)
	}
	if hasDifference(tr, true, "zone login") {
		t.Errorf("zone login, perhaps used by an included file, is called the same: %+v", tr.Differences)
	}
}
