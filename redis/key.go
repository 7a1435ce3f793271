package redis

import "strings"

// Key returns the Redis key of subject's state under the limit named
// limitName. A plain subject — not empty, without "{" or "}" — is written
// as it is between braces:
//
//	sluice:{<subject>}:<limitName>
//
// Any other subject (the empty one, or one holding a brace) is written
// percent-encoded, "%" as "%25", "{" as "%7B" and "}" as "%7D", every other
// byte as it is, and the empty subject as a lone "%", after "sluice:%":
//
//	sluice:%{<encoded subject>}:<limitName>
//
// Either way the text between the braces is the key's Redis Cluster hash
// tag: never empty, and ended by the key's first "}", so every key of one
// subject — its limits' states, their reset keys and charge ids — lies in
// the one slot of that tag. Distinct (subject, limitName) pairs never share
// a key: the tag ends at its "}", the encoding can be undone, and the "%"
// before the brace tells the two forms apart.
func Key(subject, limitName string) string {
	if plainSubject(subject) {
		return "sluice:{" + subject + "}:" + limitName
	}
	return "sluice:%{" + encodeSubject(subject) + "}:" + limitName
}

// plainSubject reports whether Key writes subject as it is: it is not
// empty and holds no brace.
func plainSubject(subject string) bool {
	return subject != "" && strings.IndexByte(subject, '{') < 0 && strings.IndexByte(subject, '}') < 0
}

// encodeSubject returns the hash tag of a subject that is not plain (see
// Key): subject with "%", "{" and "}" percent-encoded, or "%" for the empty
// subject. It never holds a brace, and no other subject has the same.
func encodeSubject(subject string) string {
	if subject == "" {
		return "%"
	}
	var b strings.Builder
	b.Grow(len(subject) + 2*strings.Count(subject, "%") + 4)
	for i := 0; i < len(subject); i++ {
		switch c := subject[i]; c {
		case '%':
			b.WriteString("%25")
		case '{':
			b.WriteString("%7B")
		case '}':
			b.WriteString("%7D")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// subjectSlot returns the Cluster hash slot of every key of subject (see
// Key), without building one for a plain subject.
func subjectSlot(subject string) uint16 {
	if plainSubject(subject) {
		return crc16(subject) % slotCount
	}
	return crc16(encodeSubject(subject)) % slotCount
}

// slotCount is the number of hash slots of a Redis Cluster.
const slotCount = 16384

// slot returns the Cluster hash slot of key: CRC16 of its hash tag (the
// text between the first "{" and the first "}" after it, when not empty),
// else of the whole key, modulo 16384.
func slot(key string) uint16 {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	return crc16(key) % slotCount
}

// crc16 is CRC-16/XMODEM (polynomial 0x1021, initial value 0), the hash of
// Redis Cluster.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc = crc<<8 ^ crcTable[byte(crc>>8)^s[i]]
	}
	return crc
}

var crcTable = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()
