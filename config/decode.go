package config

import (
	"github.com/sluice-dev/sluice/internal/yamlcheck"
)

// decoder is the shared YAML decoder plus the configuration's own fields
// (limits, plans, identity …), which are methods in the files of each topic.
type decoder struct {
	*yamlcheck.Decoder
}

// field decodes one value of a mapping.
type field = yamlcheck.Field
