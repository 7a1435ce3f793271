package sim

import (
	"context"
	"strings"
	"testing"
)

// The configuration reads no environment variable (${NAME}, or a whole
// value of $NAME) and refuses a value holding one, so the API designer
// refuses a route or a user header holding one, at its field, rather than
// write a configuration sluice check refuses.
func TestTheAPIDesignerRefusesAnEnvironmentVariable(t *testing.T) {
	for extra, field := range map[string]string{
		`endpoints: [{route: "GET /files/${DIR}", limit: 10/1m}]`: "endpoints[0].route",
		`endpoints: [{route: "$METHOD /files", limit: 10/1m}]`:    "endpoints[0].route",
		`identity: {user_header: "${USER_HEADER}"}`:               "identity.user_header",
		`identity: {user_header: "$USER_HEADER"}`:                 "identity.user_header",
	} {
		text := "plans:\n  - name: free\n    limits: [{rate: 20/1s}]\n" + extra + "\n"
		req, err := ReadAPIRequirements(strings.NewReader(text), "api.yaml")
		if err != nil {
			t.Fatal(err)
		}
		req.MaxArrivals = testArrivals
		_, err = DesignAPI(context.Background(), req)
		if err == nil || !strings.Contains(err.Error(), field+": ") || !strings.Contains(err.Error(), "environment variables") {
			t.Errorf("%s: %v, want refused at %s", extra, err, field)
		}
	}
}
