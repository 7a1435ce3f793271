package quota

// ComebackHash mixes subject and at (FNV-1a, then a 64-bit finalizer so
// that its low bits, which a span's modulus keeps, depend on all of them):
// the hash a comeback's jitter is drawn from, the same for the same client
// told the same time, whichever adapter tells it (httplimit's Retry-After,
// grpclimit's retry pushback). It allocates nothing.
func ComebackHash(subject string, at int64) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(subject); i++ {
		h = (h ^ uint64(subject[i])) * 1099511628211
	}
	for i := 0; i < 8; i++ {
		h = (h ^ uint64(byte(at>>(8*i)))) * 1099511628211
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	return h ^ h>>33
}
