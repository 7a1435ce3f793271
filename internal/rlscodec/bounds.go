package rlscodec

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// check returns why the RateLimitRequest of wire format b is beyond bounds,
// or nil, counting its descriptors and each one's entries as protobuf would
// read them (every occurrence of a repeated field is an element) without
// reading them. Malformed wire format is left for reading to refuse.
func (bounds Bounds) check(b []byte) error {
	descriptors := 0
	var deep error // the first descriptor beyond bounds.Entries
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil
		}
		size := protowire.ConsumeFieldValue(num, typ, b[n:])
		if size < 0 {
			return nil
		}
		if num == fieldRequestDescriptors && typ == protowire.BytesType {
			if bounds.Entries > 0 {
				d, _ := protowire.ConsumeBytes(b[n:])
				if e := countEntries(d); e > bounds.Entries && deep == nil {
					deep = fmt.Errorf("descriptor %d: %d entries, more than %d", descriptors, e, bounds.Entries)
				}
			}
			descriptors++
		}
		b = b[n+size:]
	}
	if bounds.Descriptors > 0 && descriptors > bounds.Descriptors {
		return fmt.Errorf("%d descriptors, more than %d in one request", descriptors, bounds.Descriptors)
	}
	return deep
}

// countEntries counts the entries of the descriptor of wire format b; it
// stops at malformed wire format.
func countEntries(b []byte) int {
	entries := 0
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return entries
		}
		size := protowire.ConsumeFieldValue(num, typ, b[n:])
		if size < 0 {
			return entries
		}
		if num == fieldDescriptorEntries && typ == protowire.BytesType {
			entries++
		}
		b = b[n+size:]
	}
	return entries
}
