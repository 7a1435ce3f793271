package sim

import (
	"context"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// A rate is read without the space around it ("100/1m\n", as a YAML block
// scalar gives it), and written so into the configuration's first comment
// line: a line break there would end the comment and break the file.
func TestDesignRateWithALineEndWritesALoadableConfig(t *testing.T) {
	for _, r := range []string{"100/1m\n", "\n100/1m", " 100/1m\r\n"} {
		a, err := Design(context.Background(), Requirements{Rate: r, MaxArrivals: 3000})
		if err != nil {
			t.Errorf("Design(rate %q): %v", r, err)
			continue
		}
		if _, err := config.Parse("design.yaml", []byte(a.Config)); err != nil {
			t.Errorf("Design(rate %q) wrote a configuration that does not load: %v\n%s", r, err, a.Config)
		}
	}
}
