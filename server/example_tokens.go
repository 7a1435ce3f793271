package server

import (
	"encoding/hex"
	"fmt"

	"github.com/sluice-dev/sluice/config"
)

// ExampleTokenWarnings returns one warning for each caller of cfg whose
// token is an example token that sluice's repository publishes (deploy/
// and docs/ print the token beside its hash): anyone who has read them
// holds that caller's scopes. The server logs them at the start and at
// every reload, and sluice check prints them. They do not refuse the
// configuration: the demo and the examples run on loopback with them.
func ExampleTokenWarnings(cfg *config.Config) []string {
	var out []string
	for _, c := range cfg.Admin.Callers {
		if token, published := publishedToken(c.TokenHash); published {
			out = append(out, fmt.Sprintf("admin.callers: caller %q holds the example token %q that sluice's repository publishes: "+
				"anyone who has read it holds the caller's scopes (%s); give the caller a token of its own (sluice token)", c.Name, token, c.Scopes))
		}
	}
	return out
}

// publishedToken returns the example token whose SHA-256 is hash, and
// whether hash is one of them.
func publishedToken(hash [32]byte) (string, bool) {
	switch hex.EncodeToString(hash[:]) {
	case "f6eb2e287519cef01c47744bf1c3c61040d45f806bc1486059c53fbc59d147f4":
		return "sluice_example-prometheus-token-replace-me", true
	case "c02480cd6f0f21470174f255f307eff357904c937a7ec92ceace22a1fce8b672":
		return "sluice_example-ingress-nginx-token-replace-me", true
	}
	return "", false
}

// warnExampleTokens logs ExampleTokenWarnings of cfg.
func (s *Server) warnExampleTokens(cfg *config.Config) {
	for _, msg := range ExampleTokenWarnings(cfg) {
		s.log.Warn(msg)
	}
}
