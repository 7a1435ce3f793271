package migrate_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// findDifference returns the first Difference of tr whose Where and Text
// contain where and text, and whether there is one.
func findDifference(tr *migrate.Translation, where, text string) (migrate.Difference, bool) {
	for _, d := range tr.Differences {
		if strings.Contains(d.Where, where) && strings.Contains(d.Text, text) {
			return d, true
		}
	}
	return migrate.Difference{}, false
}

// TestIngressNginxRPMInThousandths: ingress-nginx writes limit-rpm as
// nginx's rate=Nr/m, which nginx keeps in thousandths of a request a
// second: 100r/m drains 1666/1000 a second, a slot every 600.24 ms rather
// than 600, so the report must not call the translation exact, as the nginx
// import does not for the same zone. 120r/m (2000/1000 exactly) is exact.
func TestIngressNginxRPMInThousandths(t *testing.T) {
	ingress := func(rpm string) string {
		return "kind: Ingress\nmetadata:\n  name: api\n  annotations: {nginx.ingress.kubernetes.io/limit-rpm: \"" + rpm + "\"}\nspec:\n  rules: [{host: api.example.com}]\n"
	}
	tr, err := migrate.Import("ingress-nginx", ingress("100"), "ingress.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := findDifference(tr, "limit-rpm", "thousandths"); !ok || d.Same {
		t.Errorf("limit-rpm 100: no difference about nginx's rate in thousandths: %+v", tr.Differences)
	}
	if d, ok := findDifference(tr, "limit-rpm", "decides alike"); ok {
		t.Errorf("limit-rpm 100 is called exact: %+v", d)
	}
	tr, err = migrate.Import("ingress-nginx", ingress("120"), "ingress.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := findDifference(tr, "limit-rpm", "thousandths"); ok {
		t.Errorf("limit-rpm 120, exact in thousandths, is reported: %+v", d)
	}
	if d, ok := findDifference(tr, "limit-rpm", "decides alike"); !ok || !d.Same {
		t.Errorf("limit-rpm 120 is not called exact: %+v", tr.Differences)
	}
}
