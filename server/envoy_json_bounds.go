package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/sluice-dev/sluice/envoy"
)

// envoyJSONBounds is what counting a RateLimitRequest in protobuf's JSON
// found: its domain (a string, cut to envoy.MaxDomainBytes, for the log of
// a refusal) and why it is beyond envoy.MaxDescriptors or envoy.MaxEntries,
// or nil.
type envoyJSONBounds struct {
	domain string
	beyond error
}

// checkEnvoyJSONBounds counts the descriptors of the RateLimitRequest in
// protobuf's JSON body, and each descriptor's entries, as the gRPC codec
// counts a request's wire format (envoy.Codec): one token at a time, with
// no message and no tree made for them, so that a megabyte of empty
// descriptors or entries is refused for what it costs to read, not for the
// some 150 bytes protojson would make of each of its 3 bytes. Its reasons
// are the codec's: "N descriptors, more than 64 in one request", else the
// first descriptor beyond envoy.MaxEntries ("descriptor I: N entries, more
// than 32").
//
// It decides nothing else: a body within bounds is protojson's to read or
// refuse, as is one the count could not finish (not JSON, or nested deeper
// than any RateLimitRequest is), whose elements up to there are counted.
// protojson reads the body in order and refuses it at the first token that
// is no RateLimitRequest's, which is at or before where the count stopped:
// it never makes more descriptors or entries than were counted. The names
// counted are the fields' JSON names and proto names, which protojson
// takes both of; "descriptors" and "entries" are both, and no other field
// of a request, a descriptor, an entry or a limit override is repeated.
func checkEnvoyJSONBounds(body []byte) envoyJSONBounds {
	c := jsonCounter{dec: json.NewDecoder(bytes.NewReader(body))}
	c.dec.UseNumber() // a number is a token, never a float64 out of range
	// An error stops the count, at a body protojson refuses there or before.
	_ = c.members(func(name string) error {
		switch name {
		case "domain":
			return c.domain()
		case "descriptors":
			return c.elements(c.descriptor)
		}
		return c.skip()
	})
	var b envoyJSONBounds
	b.domain = c.domainSeen
	if c.descriptors > envoy.MaxDescriptors {
		b.beyond = fmt.Errorf("%d descriptors, more than %d in one request", c.descriptors, envoy.MaxDescriptors)
	} else {
		b.beyond = c.deep
	}
	return b
}

// jsonCounter walks one JSON value of a RateLimitRequest with a streaming
// decoder, counting descriptors and entries. Its methods each read one
// value and return the decoder's error, or errTooDeep, at which the walk
// stops.
type jsonCounter struct {
	dec         *json.Decoder
	domainSeen  string
	descriptors int
	deep        error // the first descriptor beyond envoy.MaxEntries
}

// jsonSkipDepth bounds the nesting of a value the count skips: no
// RateLimitRequest nests a skipped value (a limit override, an entry) more
// than one level deep, and the decoder keeps a word for every level open.
const jsonSkipDepth = 16

var errTooDeep = errors.New("nested deeper than a RateLimitRequest")

// descriptor counts the descriptor that is the next value, and its
// entries; an element is counted once it is read whole.
func (c *jsonCounter) descriptor() error {
	entries := 0
	err := c.members(func(name string) error {
		if name != "entries" {
			return c.skip()
		}
		return c.elements(func() error {
			err := c.skip()
			if err == nil {
				entries++
			}
			return err
		})
	})
	if entries > envoy.MaxEntries && c.deep == nil {
		c.deep = fmt.Errorf("descriptor %d: %d entries, more than %d", c.descriptors, entries, envoy.MaxEntries)
	}
	if err == nil {
		c.descriptors++
	}
	return err
}

// domain reads the next value, keeping it when it is a string.
func (c *jsonCounter) domain() error {
	t, err := c.dec.Token()
	if err != nil {
		return err
	}
	if s, ok := t.(string); ok {
		c.domainSeen = s[:min(len(s), envoy.MaxDomainBytes)]
		return nil
	}
	return c.skipRest(t)
}

// members calls member with the name of each member of the object that is
// the next value, for it to read the member's value; a value that is not
// an object is skipped.
func (c *jsonCounter) members(member func(name string) error) error {
	return c.each('{', func() error {
		t, err := c.dec.Token()
		if err != nil {
			return err
		}
		name, _ := t.(string) // an object's names are strings
		return member(name)
	})
}

// elements calls element for each element of the array that is the next
// value, for it to read the element; a value that is not an array is
// skipped.
func (c *jsonCounter) elements(element func() error) error {
	return c.each('[', element)
}

// each reads the next value: when it opens with open, calls f until the
// matching close (f reads one member or element), else skips it.
func (c *jsonCounter) each(open json.Delim, f func() error) error {
	t, err := c.dec.Token()
	if err != nil {
		return err
	}
	if t != open {
		return c.skipRest(t)
	}
	for c.dec.More() {
		if err := f(); err != nil {
			return err
		}
	}
	_, err = c.dec.Token() // the close
	return err
}

// skip reads the next value.
func (c *jsonCounter) skip() error {
	t, err := c.dec.Token()
	if err != nil {
		return err
	}
	return c.skipRest(t)
}

// skipRest reads the rest of the value that t, just read, begins: nothing
// when t is not an object's or an array's opening.
func (c *jsonCounter) skipRest(t json.Token) error {
	depth := 0
	for {
		switch t {
		case json.Delim('{'), json.Delim('['):
			if depth++; depth > jsonSkipDepth {
				return errTooDeep
			}
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
		var err error
		if t, err = c.dec.Token(); err != nil {
			return err
		}
	}
}
