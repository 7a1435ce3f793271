package envoy

import "github.com/sluice-dev/sluice/internal/yamlcheck"

// Error is one problem in a rules file, located at the line and column of
// the offending node and named by its field path (the type of
// config.Error):
//
//	ratelimit-config.yaml:5:13: descriptors[0].rate_limit.unit: "fortnight" is not one of second, minute, hour, day, week, month, year
type Error = yamlcheck.Error

// Errors returns every *Error in err (as LoadRules and LoadRuleFiles
// return them, joined), in file order.
func Errors(err error) []*Error { return yamlcheck.Errors(err) }

// decoder is the YAML decoder package config uses, so that every error
// names file:line:col and the field path, and unknown fields, duplicate keys
// and wrong types are all errors; the rules' own fields are its methods.
type decoder struct {
	*yamlcheck.Decoder
}

type field = yamlcheck.Field

// yamlError turns a yaml.v3 syntax error into a located *Error.
func yamlError(name string, err error) error { return yamlcheck.SyntaxError(name, err) }
