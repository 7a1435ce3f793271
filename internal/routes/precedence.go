package routes

// relation is how the requests two patterns match relate, as ServeMux
// judges them (net/http's pattern.go): the first's are the second's
// (equivalent), a strict subset of them (moreSpecific) or superset
// (moreGeneral), some of them and some others (overlapping), or none of
// them (disjoint).
type relation int8

const (
	equivalent relation = iota
	moreSpecific
	moreGeneral
	overlapping
	disjoint
)

// precedes reports whether ServeMux, holding the patterns a and b of
// m.lower, would route a request that both match to a: a names a host
// and b none, or a matches a strict subset of b's requests. Of two that
// ServeMux would refuse to hold together, neither precedes the other.
func precedes(a, b *lowered) bool {
	if a.host != b.host {
		return b.host == ""
	}
	return combine(compareMethods(a.method, b.method), comparePaths(a.segs, b.segs)) == moreSpecific
}

// combine returns the relation of two patterns that relate as r1 in one
// part (their methods, a segment) and as r2 in the rest.
func combine(r1, r2 relation) relation {
	switch {
	case r1 == equivalent:
		return r2
	case r1 == disjoint || r2 == disjoint:
		return disjoint
	case r1 == overlapping || r2 == overlapping:
		return overlapping
	case r2 == equivalent || r2 == r1:
		return r1
	}
	return overlapping // one more specific, the other more general
}

// compareMethods relates the methods a and b of two patterns: "" matches
// every method, and GET matches HEAD too.
func compareMethods(a, b string) relation {
	switch {
	case a == b:
		return equivalent
	case a == "":
		return moreGeneral
	case b == "":
		return moreSpecific
	case a == "GET" && b == "HEAD":
		return moreGeneral
	case a == "HEAD" && b == "GET":
		return moreSpecific
	}
	return disjoint
}

// comparePaths relates the paths of two patterns by their segments (see
// segments): a rest matches any rest of a path, a wildcard any one
// segment but the empty last one of {$}.
func comparePaths(a, b []pathSeg) relation {
	restA, restB := a[len(a)-1].rest, b[len(b)-1].rest
	rel := equivalent
	for ; len(a) > 0 && len(b) > 0 && rel != disjoint; a, b = a[1:], b[1:] {
		rel = combine(rel, compareSegments(a[0], b[0]))
	}
	switch {
	case len(a) == len(b) || rel == disjoint:
		return rel
	case len(a) < len(b) && restA:
		return combine(rel, moreGeneral)
	case len(b) < len(a) && restB:
		return combine(rel, moreSpecific)
	}
	return disjoint
}

// compareSegments relates two segments of patterns' paths.
func compareSegments(x, y pathSeg) relation {
	switch {
	case x.rest && y.rest, x.wild && y.wild:
		return equivalent
	case x.rest:
		return moreGeneral
	case y.rest:
		return moreSpecific
	case x.wild && y.lit == "", y.wild && x.lit == "":
		return disjoint // {$}
	case x.wild:
		return moreGeneral
	case y.wild:
		return moreSpecific
	case x.lit == y.lit:
		return equivalent
	}
	return disjoint
}

// Outranks reports whether a request that the patterns a and b both
// match, or spellings of it that each matches (see Spellings), is a's where
// a ServeMux holds the two: a names a host and b none, or a matches a
// strict subset of b's requests, or neither is more specific though one
// request may match both ("GET /api/" and "/api/health", or two patterns
// of the same requests: ServeMux refuses to hold them together), which
// leaves it to a. It is false where b precedes a, and where no request
// matches both ("/jobs/run/" and "POST /jobs/run"): a spelling that b
// matches is then b's alone. Hosts are compared as LowerHost writes them,
// and paths by their literals unescaped and in lower case, as Spellings
// reads a path in lower case.
func Outranks(a, b string) bool {
	ma, ha, pa := splitPattern(a)
	mb, hb, pb := splitPattern(b)
	if ha != hb {
		return hb == ""
	}
	switch combine(compareMethods(ma, mb), comparePaths(segments(pa), segments(pb))) {
	case moreGeneral, disjoint:
		return false
	}
	return true
}
