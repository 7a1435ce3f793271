// Package boundedfile reads operator-named files (certificates, keys,
// secrets, key lists) within a bound, so that a path naming a device, a
// pipe or a stray large file is an error rather than a read that blocks or
// never ends.
package boundedfile

import (
	"fmt"
	"io"
	"os"
)

// Read reads the regular file at path (or a link to one), which must hold
// at most limit bytes. A path that is not a regular file, or a file of more
// than limit bytes, is an error naming the path.
func Read(path string, limit int64) ([]byte, error) {
	if st, err := os.Stat(path); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path) // opening a pipe would wait for a writer
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s holds more than %d bytes", path, limit)
	}
	return b, nil
}
