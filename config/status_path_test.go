package config_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

func TestStatusPath(t *testing.T) {
	base := "plans: {p: {limits: [{name: m, algorithm: gcra, quantity: 1, window: 1s}]}}\nresponse:\n  status_path: "
	c, err := config.Parse("t.yaml", []byte(base+"/v1/rate_limit\n"))
	if err != nil || c.Response.StatusPath != "/v1/rate_limit" {
		t.Fatalf("%v, %q", err, c.Response.StatusPath)
	}
	for value, want := range map[string]string{
		"rate_limit":   `t.yaml:3:16: response.status_path: "rate_limit" is not a clean absolute path such as /rate_limit`,
		"/a/../b":      `"/a/../b" is not a clean absolute path`,
		"/{id}":        `"/{id}" is not a clean absolute path`,
		"/docs":        `"/docs" is a path sluice serves otherwise`,
		"/healthz":     `"/healthz" is a path sluice serves otherwise`,
		"/":            `"/" is a path sluice serves otherwise`,
		"/rate_limit/": `"/rate_limit/" is not a clean absolute path`,
		"/rate limit":  `is not a clean absolute path`,
	} {
		_, err := config.Parse("t.yaml", []byte(base+"\""+value+"\"\n"))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %s", value, err, want)
		}
	}
}
