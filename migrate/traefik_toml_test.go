package migrate_test

import (
	"os"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportTraefikTOMLIsItsYAML: Traefik's file provider reads its
// dynamic configuration from TOML as from YAML, and the import does too:
// testdata/traefik/dynamic.toml (routers with rules naming rateLimit
// middlewares of average, period, burst and sourceCriterion, beside other
// middlewares and services) and dynamic.yml, the same configuration in
// YAML, are known for Traefik's and become the same sluice configuration
// and the same report.
func TestImportTraefikTOMLIsItsYAML(t *testing.T) {
	imported := map[string]*migrate.Translation{}
	for _, name := range []string{"dynamic.toml", "dynamic.yml"} {
		src, err := os.ReadFile("testdata/traefik/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := migrate.Detect(string(src)); !ok || got != "traefik" {
			t.Errorf("%s: Detect = %q (%v), want traefik", name, got, ok)
		}
		tr, err := migrate.Import("traefik", string(src), name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		imported[name] = tr
	}
	toml, yml := imported["dynamic.toml"], imported["dynamic.yml"]
	if len(yml.SluiceRules) != 3 {
		t.Fatalf("the YAML became %d rules, want one per limited router (3): %+v", len(yml.SluiceRules), yml.SluiceRules)
	}
	for _, enforce := range []bool{false, true} {
		fromTOML, err := toml.Files(enforce)
		if err != nil {
			t.Fatal(err)
		}
		fromYAML, err := yml.Files(enforce)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.ReplaceAll(fromTOML[migrate.ConfigFile], "dynamic.toml", "dynamic.yml")
		if want := fromYAML[migrate.ConfigFile]; got != want {
			t.Errorf("enforce %v: from TOML:\n%s\nfrom YAML:\n%s", enforce, got, want)
		}
	}
	if got, want := strings.ReplaceAll(toml.Report(), "dynamic.toml", "dynamic.yml"), yml.Report(); got != want {
		t.Errorf("reports differ: from TOML:\n%s\nfrom YAML:\n%s", got, want)
	}
}

// TestImportTraefikTOMLWithoutTables: a TOML file may say everything in
// dotted keys and inline tables, without a table header; it is Traefik's,
// and read as the same middleware in YAML is.
func TestImportTraefikTOMLWithoutTables(t *testing.T) {
	const src = `http.middlewares.rl.rateLimit = { average = 3, period = "1m", burst = 2 }
http.routers.api = { rule = "PathPrefix(` + "`/api/`" + `)", service = "api", middlewares = ["rl"] }
`
	if got, ok := migrate.Detect(src); !ok || got != "traefik" {
		t.Errorf("Detect = %q (%v), want traefik", got, ok)
	}
	tr, err := migrate.Import("traefik", src, "dynamic")
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.SluiceRules) != 1 || len(tr.SluiceRules[0].Limits) != 1 {
		t.Fatalf("rules %+v, want one of one limit", tr.SluiceRules)
	}
	if l := tr.SluiceRules[0].Limits[0]; l.Quantity != 3 || l.Window.String() != "1m0s" || l.Burst != 2 {
		t.Errorf("limit %+v, want 3 per 1m, burst 2", l)
	}
}

// TestImportTraefikTOMLErrorsNameTheLine: a file that is not TOML is
// refused at the line and column the TOML parser stopped at; a value of
// the wrong type is refused naming the value, as in YAML, without a line
// the TOML parser does not give.
func TestImportTraefikTOMLErrorsNameTheLine(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"a table header left open", "[http.middlewares.rl.rateLimit]\naverage = 3\n[http.routers\n", "dynamic.toml:3:14: "},
		{"a key without a value", "[http.middlewares.rl.rateLimit]\naverage =\n", "dynamic.toml:2:10: "},
		{"a key given twice", "[http.middlewares.rl.rateLimit]\naverage = 3\naverage = 4\n", "dynamic.toml:3:1: "},
		{"a key given twice after a byte order mark", "\uFEFF[http.middlewares.rl.rateLimit]\naverage = 3\naverage = 4\n", "dynamic.toml:3:1: "},
		{"a string for a number", "[http.middlewares.rl.rateLimit]\naverage = \"lots\"\n", "dynamic.toml: "},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := migrate.Import("traefik", c.src, "dynamic.toml")
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to start %q", err, c.want)
			}
			if strings.Contains(err.Error(), "line 0") || strings.Contains(err.Error(), "YAML") {
				t.Errorf("err = %v: names a line or a format the file does not have", err)
			}
			if c.name == "a string for a number" && !strings.Contains(err.Error(), "lots") {
				t.Errorf("err = %v, want it to name the value", err)
			}
		})
	}
}
