package envoy

import "github.com/sluice-dev/sluice/internal/yamlcheck"

// decoder is the YAML decoder package config uses, so that every error
// names file:line:col and the field path, and unknown fields, duplicate keys
// and wrong types are all errors; the rules' own fields are its methods.
type decoder struct {
	*yamlcheck.Decoder
}

type field = yamlcheck.Field

// yamlError turns a yaml.v3 syntax error into a located *config.Error.
func yamlError(name string, err error) error { return yamlcheck.SyntaxError(name, err) }
