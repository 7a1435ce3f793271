package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/envoy"
)

// printEnvoy prints the ENVOY line: the rule files of the envoy section,
// the domains they limit, and the links to nothing in their folders, which
// the server skips with a warning (envoy.Rules.Skipped).
func printEnvoy(w io.Writer, cfg *config.Config) error {
	if !cfg.Envoy.Enabled {
		return nil
	}
	rules, err := envoy.LoadRuleFiles(cfg.Envoy.Rules...)
	if err != nil {
		return err
	}
	line := fmt.Sprintf("ENVOY  %s: domains %s", strings.Join(cfg.Envoy.Rules, ", "), strings.Join(rules.Domains(), ", "))
	if skipped := rules.Skipped(); len(skipped) > 0 {
		line += "; skipped, a link to nothing: " + strings.Join(skipped, ", ")
	}
	fmt.Fprintln(w, line)
	return nil
}
