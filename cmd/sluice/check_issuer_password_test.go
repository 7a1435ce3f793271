package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// With discover, the discovery document is fetched from the issuer's URL,
// whose user information is the fetch's credentials: sluice check shows
// that URL without its password (the identity line's "iss", check
// -online's "the OpenID configuration of …"), as it shows jwks_url.
func TestCheckNeverPrintsTheDiscoveredIssuersPassword(t *testing.T) {
	j := &config.JWT{Name: "idp", Discover: true, Issuer: "https://idp:hunter2@127.0.0.1:1/realms/api"}
	if s := jwtText(j, false, ""); strings.Contains(s, "hunter2") {
		t.Errorf("sluice check's identity line shows the password: %s", s)
	}
	var out bytes.Buffer
	cfg := &config.Config{}
	cfg.Identity.JWT = []*config.JWT{j}
	_ = checkOnline(context.Background(), &out, cfg)
	if strings.Contains(out.String(), "hunter2") {
		t.Errorf("sluice check -online shows the password: %s", out.String())
	}
}
