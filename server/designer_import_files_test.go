package server_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// POST /designer/import answers the same whatever the sluice host's disk
// holds: the translation is checked without opening a file it names. An
// nginx Plus configuration whose auth_jwt_key_file names its key set (a
// path on the nginx host) translates to identity.jwt's jwks_file, as
// written: a 200, whether the sluice host has no such file, a file of
// something else there (a secret, which a caller with the read scope
// would otherwise learn the first character of) or a folder, and no word
// of what the host holds at that path.
func TestDesignerImportReadsNoFileOfTheServer(t *testing.T) {
	f := newFixture(t, testConfig)
	dir := t.TempDir()
	secret := filepath.Join(dir, "redis-password")
	if err := os.WriteFile(secret, []byte("db_password=hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(dir, "no-such-file.json"), secret, dir} {
		src := "http {\n    auth_jwt_key_file " + path + ";\n    limit_req_zone $jwt_claim_sub zone=users:10m rate=10r/s;\n" +
			"    server { location /api/ { auth_jwt \"api\"; limit_req zone=users; } }\n}\n"
		body, _ := json.Marshal(map[string]any{"format": "nginx", "source": src})
		r := f.do(t, "POST", "/designer/import", string(body), nil)
		answer := readAll(t, r)
		if r.StatusCode != 200 {
			t.Errorf("auth_jwt_key_file %s: %d %s, want 200 with the translation", path, r.StatusCode, answer)
			continue
		}
		var got struct{ Files map[string]string }
		if err := json.Unmarshal([]byte(answer), &got); err != nil {
			t.Fatal(err)
		}
		if cfg := got.Files["sluice.yaml"]; !strings.Contains(cfg, "jwks_file: "+strconv.Quote(path)+"\n") {
			t.Errorf("auth_jwt_key_file %s: the translation does not name it as jwks_file:\n%s", path, cfg)
		}
		for _, told := range []string{"no such file", "not a JWK Set", "invalid character", "not a regular file", "hunter2"} {
			if strings.Contains(answer, told) {
				t.Errorf("auth_jwt_key_file %s: the answer tells what the sluice host holds at that path (%q)", path, told)
			}
		}
	}
}
