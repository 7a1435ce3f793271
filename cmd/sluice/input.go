package main

import (
	"io"
	"os"
)

// openInput opens the file at name for reading, or standard input when
// name is "-", as a FILE argument is read by import, simulate -trace and
// design -requirements. Closing standard input's reader leaves it open.
func openInput(name string) (io.ReadCloser, error) {
	if name == "-" {
		return io.NopCloser(os.Stdin), nil
	}
	return os.Open(name)
}

// inputName is how errors and reports name the input name: "standard
// input" for "-", else name itself.
func inputName(name string) string {
	if name == "-" {
		return "standard input"
	}
	return name
}
