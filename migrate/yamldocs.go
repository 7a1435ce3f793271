package migrate

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"
)

// eachDocument decodes the YAML documents of src in turn, each into a new
// T, and passes it to use; an error names source and, for YAML, the line.
func eachDocument[T any](src, source string, use func(*T) error) error {
	dec := yaml.NewDecoder(strings.NewReader(src))
	for {
		var d T
		err := dec.Decode(&d)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %s", source, strings.TrimPrefix(err.Error(), "yaml: "))
		}
		if err := use(&d); err != nil {
			return fmt.Errorf("%s: %w", source, err)
		}
	}
}
