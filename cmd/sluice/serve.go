package main

import (
	"context"
	"errors"
	"io"
)

// runServe will run the server; until the server lands it says so plainly
// rather than pretend.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("the server is not wired yet: the library (package sluice, memory store) works today, see README.md")
}
