package migrate_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// A key, value or rule name tagged !!binary is the text its base64
// encodes to yaml.v2 and to sluice's Envoy service: the import names the
// rule by it, as the service enforces it, and refuses a text that is not
// base64, as both refuse the file, naming its place as the service does.
func TestEnvoyImportReadsBinaryTaggedTexts(t *testing.T) {
	f := "domain: api\ndescriptors:\n  - key: !!binary dXNlcg==\n    value: !!binary YWxpY2U=\n" +
		"    rate_limit: {unit: second, requests_per_unit: 5, name: !!binary cGVyX3VzZXI=}\n"
	tr, err := migrate.Import("envoy", f, "rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Rules) != 1 || tr.Rules[0].Name != "per_user" || !strings.Contains(tr.Rules[0].Source, "user=alice") {
		t.Errorf("rules %+v, want one named per_user, of user=alice", tr.Rules)
	}
	_, err = migrate.Import("envoy", strings.Replace(f, "YWxpY2U=", "not base64", 1), "rules.yaml")
	if want := `rules.yaml:4:12: descriptors[0].value: tagged !!binary, but "not base64" is not base64`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("got %v, want %s…", err, want)
	}
}
