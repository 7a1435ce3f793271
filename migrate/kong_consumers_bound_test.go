package migrate_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/migrate"
)

// A decK file of more consumer and consumer group rate-limiting plugins
// than MaxPlaces is refused saying the bound before any is translated:
// each is a plan, and 20,000 consumers' took the import 28 s of a core to
// write a configuration too large to load, reported as sluice's own bug.
func TestKongImportBoundsTheConsumerPlugins(t *testing.T) {
	file := func(consumers int) string {
		var b strings.Builder
		b.WriteString("_format_version: \"3.0\"\nplugins:\n- name: key-auth\n- name: rate-limiting\n  config: {minute: 10}\nconsumers:\n")
		for i := range consumers {
			fmt.Fprintf(&b, "- username: u%d\n  keyauth_credentials: [{key: k%d}]\n  plugins: [{name: rate-limiting, config: {minute: %d}}]\n", i, i, i+1)
		}
		return b.String()
	}
	src := file(migrate.MaxPlaces + 1)
	// Refusing costs about what reading the file does: measured beside a
	// plain YAML decode of it, on the same machine at the same moment,
	// the bound holds however loaded the machine is.
	start := time.Now()
	var doc any
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	read := time.Since(start)
	start = time.Now()
	_, err := migrate.Import("kong", src, "kong.yaml")
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than the %d", migrate.MaxPlaces)) {
		t.Errorf("%d consumer plugins: %v, want refused saying the bound", migrate.MaxPlaces+1, err)
	}
	if d := time.Since(start); d > 4*read+time.Second {
		t.Errorf("refusing took %v, where decoding the file's YAML took %v", d, read)
	}
	if _, err := migrate.Import("kong", file(10), "kong.yaml"); err != nil {
		t.Errorf("10 consumer plugins: %v", err)
	}
}
