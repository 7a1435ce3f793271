package server_test

import (
	"io"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
)

// sluice_config_info names the configuration in force by a digest of its
// files: a reload to other content changes it, back to the same content
// restores it, a refused reload leaves it — so that instances of a fleet
// that serve different configurations show different digests.
func TestConfigInfoNamesTheConfigurationInForce(t *testing.T) {
	srv, file := loadServer(t, t.TempDir(), testConfig)
	admin := httptest.NewServer(srv.AdminHandler())
	defer admin.Close()
	info := regexp.MustCompile(`(?m)^sluice_config_info\{sha256="([0-9a-f]{12})"\} 1$`)
	digests := func() []string {
		t.Helper()
		r, err := admin.Client().Get(admin.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		var out []string
		for _, m := range info.FindAllStringSubmatch(string(b), -1) {
			out = append(out, m[1])
		}
		return out
	}
	write := func(text string) {
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	first := digests()
	if len(first) != 1 {
		t.Fatalf("sluice_config_info series at start: %v, want one", first)
	}
	write(strings.Replace(testConfig, "quantity: 3", "quantity: 4", 1))
	if err := srv.Reload(); err != nil {
		t.Fatal(err)
	}
	if other := digests(); len(other) != 1 || other[0] == first[0] {
		t.Errorf("after a reload to other content: %v, want one digest other than %s", other, first[0])
	}
	write(testConfig)
	if err := srv.Reload(); err != nil {
		t.Fatal(err)
	}
	if again := digests(); len(again) != 1 || again[0] != first[0] {
		t.Errorf("back to the first content: %v, want %s", again, first[0])
	}
	write("plans: nope\n")
	if srv.Reload() == nil {
		t.Fatal("a broken configuration reloaded")
	}
	if kept := digests(); len(kept) != 1 || kept[0] != first[0] {
		t.Errorf("after a refused reload: %v, want the one in force, %s", kept, first[0])
	}
}
