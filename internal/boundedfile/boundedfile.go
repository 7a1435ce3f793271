// Package boundedfile reads operator-named files (certificates, keys,
// secrets, key lists) within a bound, so that a path naming a device, a
// pipe or a stray large file is an error rather than a read that blocks or
// never ends.
package boundedfile

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// Read reads the regular file at path (or a link to one), which must hold
// at most limit bytes. A path that is not a regular file, or a file of more
// than limit bytes, is an error naming the path. Anything but a regular
// file is refused before it is opened (opening a device may act on it), and
// what is opened is opened without waiting for a writer and judged again,
// so a path that becomes a pipe or a device meanwhile is refused, never
// waited on.
func Read(path string, limit int64) ([]byte, error) {
	if st, err := os.Stat(path); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s holds more than %d bytes", path, limit)
	}
	return b, nil
}
