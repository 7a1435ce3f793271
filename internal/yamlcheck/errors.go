package yamlcheck

import (
	"errors"
	"fmt"
)

// Error is one problem in a configuration file, located at the line and
// column of the offending node and named by its field path.
//
//	examples/sluice.yaml:14:17: plans.free.limits[1].window: "1 fortnight" is not a duration (use e.g. 30s, 1m, 24h, 7d)
type Error struct {
	File      string
	Line, Col int    // 1-based; 0 when the problem has no single place
	Path      string // e.g. plans.free.limits[1].window
	Msg       string
}

func (e *Error) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d:%d", e.File, e.Line, e.Col)
	}
	if e.Path == "" {
		return loc + ": " + e.Msg
	}
	return loc + ": " + e.Path + ": " + e.Msg
}

// Errors returns every *Error in err (as Load returns them, joined), in
// file order.
func Errors(err error) []*Error {
	var out []*Error
	var walk func(error)
	walk = func(err error) {
		var e *Error
		switch {
		case err == nil:
		case errors.As(err, &e) && e == err:
			out = append(out, e)
		default:
			if j, ok := err.(interface{ Unwrap() []error }); ok {
				for _, x := range j.Unwrap() {
					walk(x)
				}
			} else if errors.As(err, &e) {
				out = append(out, e)
			}
		}
	}
	walk(err)
	return out
}
