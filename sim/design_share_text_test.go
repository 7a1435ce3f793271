package sim

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// Where each instance's share of a split bucket is its burst and its
// refill together, the analysis's sentence and the quantity's comment in
// the configuration name the quantity and the burst the configuration
// states, not only their sum.
func TestDesignPerInstanceShareNamesTheConfiguredQuantityAndBurst(t *testing.T) {
	req := Requirements{Rate: "100/1m", Burst: 20, Precision: "strict", Instances: 3, Store: "memory"}
	a := design(t, req)
	cfg, err := config.Parse("design.yaml", []byte(a.Config))
	if err != nil {
		t.Fatalf("config.Parse: %v\n%s", err, a.Config)
	}
	l := cfg.Policy.Plan("default").Limits[0]
	sentence := regexp.MustCompile(`[^.]*configured with 1/3 of the quota[^.]*\.`).FindString(a.Markdown)
	if want := fmt.Sprintf("quantity: %d and burst: %d", l.Quantity(), l.Burst()); !strings.Contains(sentence, want) {
		t.Errorf("the configuration holds %v; the analysis says %q, which does not name %q", l, sentence, want)
	}
	comment := regexp.MustCompile(`quantity: \d+ +#.*`).FindString(a.Config)
	if want := fmt.Sprintf("%d + burst %d − 1 = %d", l.Quantity(), l.Burst(), bucketWorst(l.Quantity(), l.Burst())); !strings.Contains(comment, want) {
		t.Errorf("the configuration's comment %q does not say %q", comment, want)
	}
}

// The whole API's configuration comments each per-instance split bucket
// as the single limit's does.
func TestDesignAPIPerInstanceShareNamesTheConfiguredQuantityAndBurst(t *testing.T) {
	a := designAPI(t, "instances: 3\nstore: memory\nplans: [{name: basic, limits: [{rate: 100/1m, burst: 20, precision: strict}]}]\n")
	cfg, err := config.Parse("api.yaml", []byte(a.Config))
	if err != nil {
		t.Fatalf("config.Parse: %v\n%s", err, a.Config)
	}
	l := cfg.Policy.Plan("basic").Limits[0]
	comment := regexp.MustCompile(`quantity: \d+ +#.*`).FindString(a.Config)
	if want := fmt.Sprintf("%d + burst %d − 1 = %d", l.Quantity(), l.Burst(), bucketWorst(l.Quantity(), l.Burst())); l.Burst() == 0 || !strings.Contains(comment, want) {
		t.Errorf("the configuration holds %v; its comment %q does not say %q", l, comment, want)
	}
}
