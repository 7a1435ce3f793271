package redis

import "strings"

// Key returns the Redis key of subject's state under the limit named
// limitName: "sluice:{" + subject + "}:" + limitName.
func Key(subject, limitName string) string {
	return "sluice:{" + subject + "}:" + limitName
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
