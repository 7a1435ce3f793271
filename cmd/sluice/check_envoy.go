package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/envoy"
)

// printEnvoy prints the ENVOY line: the rule files of the envoy section
// and the domains they limit.
func printEnvoy(w io.Writer, cfg *config.Config) error {
	if !cfg.Envoy.Enabled {
		return nil
	}
	rules, err := envoy.LoadRuleFiles(cfg.Envoy.Rules...)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "ENVOY  %s: domains %s\n", strings.Join(cfg.Envoy.Rules, ", "), strings.Join(rules.Domains(), ", "))
	return nil
}
