package migrate_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// A translation whose configuration would be larger than the 4 MiB
// config.Load reads (600 Kong consumers of 2 KB names, each a plan of four
// periods whose comments repeat the name) is
// refused by Files naming the bound and what to do, not written as a file
// sluice import then calls its own bug ("please report this").
func TestFilesRefusesAConfigurationLargerThanSluiceLoads(t *testing.T) {
	var b strings.Builder
	b.WriteString("_format_version: \"3.0\"\nplugins:\n- name: key-auth\n- name: rate-limiting\n  config: {minute: 10}\nconsumers:\n")
	// Consumers of long names, each repeated in the comment of its four
	// limits, make the file large with few places (translating thousands
	// costs seconds under the race detector).
	name := strings.Repeat("user-with-a-long-name-", 100)
	for i := range 600 {
		fmt.Fprintf(&b, "- username: %s%d\n  keyauth_credentials: [{key: k%d}]\n  plugins: [{name: rate-limiting, config: {second: 5, minute: %d, hour: 100000, day: 1000000}}]\n", name, i, i, i+1)
	}
	tr, err := migrate.Import("kong", b.String(), "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	files, err := tr.Files(false)
	if err == nil || !strings.Contains(err.Error(), "4 MiB") {
		t.Errorf("Files: %v (a %d-byte %s), want refused naming the 4 MiB bound", err, len(files[migrate.ConfigFile]), migrate.ConfigFile)
	}
}
