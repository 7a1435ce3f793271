package sim

import (
	"context"
	"regexp"
	"testing"
)

// pluralOfOne finds a count of one written with a plural noun.
var pluralOfOne = regexp.MustCompile(`(?:^|[^0-9.,])1 (?:keys|requests|units|instances|entries|clients|plans)\b|(?:^|[^0-9.,])1 requests? \(units\)`)

// A count of one is written in the singular in the designer's text: "for
// 1 key", "1 request (unit)", "costs 1 unit".
func TestDesignWritesACountOfOneInTheSingular(t *testing.T) {
	for _, req := range []Requirements{
		{Rate: "1/1m", Keys: 1, Precision: PrecisionStrict},
		{Rate: "100/1m", Keys: 1, Precision: PrecisionStrict},
		{Rate: "100000/1m", Keys: 1, Precision: PrecisionApproximate},
		{Rate: "1/1m", Keys: 1, Precision: PrecisionLoose},
		{Rate: "1/month", Keys: 1},
	} {
		req.MaxArrivals = testArrivals
		a, err := Design(context.Background(), req)
		if err != nil {
			t.Fatalf("%s: %v", req.Rate, err)
		}
		for what, text := range map[string]string{"analysis": a.Markdown, "configuration": a.Config} {
			if m := pluralOfOne.FindAllString(text, -1); m != nil {
				t.Errorf("%s %s, 1 key: the %s writes %q", req.Rate, req.Precision, what, m)
			}
		}
	}
	a := designAPI(t, `
identity: {api_keys: true}
plans: [{name: free, clients: 1, limits: [{rate: 20/1s}]}]
endpoints: [{route: "POST /api/generate", cost: 1}]
internal: [{name: batch, rate: 50/1s}]
capacity: 100000/1s
`)
	for what, text := range map[string]string{"analysis": a.Markdown, "configuration": a.Config} {
		if m := pluralOfOne.FindAllString(text, -1); m != nil {
			t.Errorf("whole API: the %s writes %q", what, m)
		}
	}
}
