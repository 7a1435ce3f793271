package sim

import (
	"errors"
	"fmt"
	"strings"
)

// fieldError is a requirement refused for the value of one field, named
// by its path in the requirements ("plans[1].limits[0].burst"), so that
// a requirement read from a file can be reported at the field's line and
// column (source.locate).
type fieldError struct {
	path string
	err  error
}

func (e *fieldError) Error() string { return e.path + ": " + e.err.Error() }
func (e *fieldError) Unwrap() error { return e.err }

// fieldErrorf returns a *fieldError of path with the message format.
func fieldErrorf(path, format string, args ...any) error {
	return &fieldError{path: path, err: fmt.Errorf(format, args...)}
}

// joinPath appends a field's path to its parent's: a field's name after
// a dot, an index or nothing as it is.
func joinPath(parent, field string) string {
	switch {
	case parent == "":
		return field
	case field == "" || strings.HasPrefix(field, "["):
		return parent + field
	}
	return parent + "." + field
}

// rateError names the field of calendarOf's error under parent: the zone
// or starts it names, else the rate.
func rateError(parent string, err error) error {
	var fe *fieldError
	if errors.As(err, &fe) {
		return &fieldError{path: joinPath(parent, fe.path), err: fe.err}
	}
	return &fieldError{path: joinPath(parent, "rate"), err: err}
}

// limitError names the field of err, an error of designLimit, under the
// limit at parent: the limit's field err names, or with whole (a limit
// stated as one rate: a rule's, the capacity) parent itself. A field the
// API sets for every limit (instances, store, redis_mode,
// redis_addresses) is the API's own, and any other error is returned as
// it is.
func limitError(parent string, whole bool, err error) error {
	var fe *fieldError
	if !errors.As(err, &fe) || parent == "" {
		return err
	}
	switch top, _, _ := strings.Cut(fe.path, "["); top {
	case "instances", "store", "redis_mode", "redis_addresses":
		return err
	}
	if whole {
		return &fieldError{path: parent, err: fe.err}
	}
	return &fieldError{path: joinPath(parent, fe.path), err: fe.err}
}
