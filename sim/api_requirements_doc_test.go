package sim

import (
	"context"
	"os"
	"strings"
	"testing"
)

// The example of APIRequirements' doc comment is what a reader copies to
// start: it designs, without warnings.
func TestAPIRequirementsDocExampleDesigns(t *testing.T) {
	src, err := os.ReadFile("api_requirements.go")
	if err != nil {
		t.Fatal(err)
	}
	_, doc, _ := strings.Cut(string(src), "// APIRequirements are what")
	doc, _, _ = strings.Cut(doc, "type APIRequirements struct")
	var yaml strings.Builder
	for _, line := range strings.Split(doc, "\n") {
		if text, ok := strings.CutPrefix(line, "//\t"); ok {
			yaml.WriteString(text + "\n")
		}
	}
	if !strings.Contains(yaml.String(), "plans:") {
		t.Fatalf("no example found in the doc comment:\n%s", yaml.String())
	}
	req, err := ReadAPIRequirements(strings.NewReader(yaml.String()), "example")
	if err != nil {
		t.Fatal(err)
	}
	req.MaxArrivals = testArrivals
	a, err := DesignAPI(context.Background(), req)
	if err != nil {
		t.Fatalf("the doc comment's example: %v\n%s", err, yaml.String())
	}
	if len(a.Warnings) > 0 {
		t.Errorf("the doc comment's example warns: %q", a.Warnings)
	}
}
