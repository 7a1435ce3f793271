package envoy

import (
	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/internal/yamlcheck"
)

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

// Bool decodes a boolean as envoyproxy/ratelimit's YAML library (yaml.v2,
// YAML 1.1) reads one (yamlcheck.YAML11Bool): an unquoted true, yes, on or
// y is true and false, no, off or n is false, each in lower case,
// capitalized or upper case, and so is one tagged !!bool, quoted or not.
// Any other quoted value is a string, which is not a boolean there either.
func (d *decoder) Bool(n *yaml.Node, path string) bool {
	if v, ok := yamlcheck.YAML11Bool(n); ok {
		return v
	}
	d.Errorf(n, path, "want true or false, got %s", yamlcheck.Describe(n))
	return false
}
