package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// readJSON decodes r's body — at most limit bytes, one JSON value, no
// unknown field — into v. On failure it returns the status to answer (400,
// or 413 for a body too large) and what was wrong.
func readJSON(w http.ResponseWriter, r *http.Request, limit int64, v any) (int, error) {
	_, status, err := readJSONBody(w, r, limit, v)
	return status, err
}

// readJSONBody is readJSON that also returns the body it read, whole when
// it decoded (at most limit bytes), for what encoding/json does not keep:
// which of two members of one name came last.
func readJSONBody(w http.ResponseWriter, r *http.Request, limit int64, v any) ([]byte, int, error) {
	var body bytes.Buffer
	dec := json.NewDecoder(io.TeeReader(http.MaxBytesReader(w, r.Body, limit), &body))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	var tooBig *http.MaxBytesError
	if err == nil {
		// What follows the value is whitespace up to the end, or a body
		// over limit (whatever it holds past it), or a second value.
		if rest := dec.Decode(&struct{}{}); errors.As(rest, &tooBig) {
			err = rest
		} else if rest != io.EOF {
			err = errors.New("more than one JSON value")
		}
	}
	switch {
	case errors.As(err, &tooBig):
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("the body is larger than %d bytes", limit)
	case err != nil:
		return nil, http.StatusBadRequest, err
	}
	return body.Bytes(), http.StatusOK, nil
}
