package rlscodec

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// check returns why the RateLimitRequest of wire format b is beyond bounds,
// or nil, counting its descriptors and each one's entries as protobuf would
// read them (every occurrence of a repeated field is an element) without
// reading them. Counting stops at malformed wire format, which reading
// refuses.
func (bounds Bounds) check(b []byte) error {
	descriptors := 0
	var deep error // the first descriptor beyond bounds.Entries
	eachField(b, func(num protowire.Number, typ protowire.Type, value []byte) {
		if num != fieldRequestDescriptors || typ != protowire.BytesType {
			return
		}
		if bounds.Entries > 0 {
			d, _ := protowire.ConsumeBytes(value)
			if e := countEntries(d); e > bounds.Entries && deep == nil {
				deep = fmt.Errorf("descriptor %d: %d entries, more than %d", descriptors, e, bounds.Entries)
			}
		}
		descriptors++
	})
	if bounds.Descriptors > 0 && descriptors > bounds.Descriptors {
		return fmt.Errorf("%d descriptors, more than %d in one request", descriptors, bounds.Descriptors)
	}
	return deep
}

// countEntries counts the entries of the descriptor of wire format b; it
// stops at malformed wire format.
func countEntries(b []byte) int {
	entries := 0
	eachField(b, func(num protowire.Number, typ protowire.Type, _ []byte) {
		if num == fieldDescriptorEntries && typ == protowire.BytesType {
			entries++
		}
	})
	return entries
}

// eachField calls f with the number, type and value (tag excluded) of each
// field of wire format b in order, stopping at malformed wire format.
func eachField(b []byte, f func(num protowire.Number, typ protowire.Type, value []byte)) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return
		}
		size := protowire.ConsumeFieldValue(num, typ, b[n:])
		if size < 0 {
			return
		}
		f(num, typ, b[n:n+size])
		b = b[n+size:]
	}
}
