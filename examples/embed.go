// Package examples holds the example configuration, embedded so that
// `sluice serve` without flags runs it from anywhere.
package examples

import _ "embed"

// Config is examples/sluice.yaml.
//
//go:embed sluice.yaml
var Config []byte

// ConfigName is the name errors and logs give the embedded configuration.
const ConfigName = "examples/sluice.yaml (embedded)"
