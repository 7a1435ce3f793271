package main

import (
	"io"
	"os"
)

// writeOutput calls write with stdout when name is empty; else with the
// file name, made or truncated by create (os.Create when nil), which it
// then closes. An error of Close, where some file systems first report a
// full disk or a quota, is returned as one of write would be: the file
// was not written.
func writeOutput(name string, stdout io.Writer, create func(name string) (io.WriteCloser, error), write func(io.Writer) error) error {
	if name == "" {
		return write(stdout)
	}
	if create == nil {
		create = func(name string) (io.WriteCloser, error) { return os.Create(name) }
	}
	f, err := create(name)
	if err != nil {
		return err
	}
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
