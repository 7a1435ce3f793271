package migrate

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// haproxyACL is one ACL definition: a fetch, its match method (-m) and its
// values. A named ACL defined on several lines matches when any does.
type haproxyACL struct {
	fetch  string
	method string // the -m method; "" for the fetch's own; "file" for -f or -M
	file   string // the -f or -M file
	values []string
	icase  bool // -i: the values match in any case
	line   int
}

// haproxyAtom is one term of a condition: a named ACL (its definitions)
// or an anonymous one ({ … }), maybe negated (!).
type haproxyAtom struct {
	neg  bool
	name string // "" for an anonymous ACL
	defs []haproxyACL
	text string // the ACL as written, without its !: "is_api", "{ path_beg /api/ }"
}

// String is the atom as a condition writes it.
func (a haproxyAtom) String() string {
	if a.neg {
		return "!" + a.text
	}
	return a.text
}

// haproxyCond is an if or unless condition: terms joined by ||, each a
// conjunction of atoms.
type haproxyCond struct {
	unless bool
	terms  [][]haproxyAtom
}

// maxOrTerms bounds the terms orTerms multiplies an unless condition out
// into.
const maxOrTerms = 16

// orTerms returns the terms of the if condition that holds exactly when c
// does, each a conjunction of atoms: c's own terms for if; for unless, by
// De Morgan, !(T1 || T2 || …) = !T1 && !T2 && …, each !Ti being one of
// Ti's atoms negated, multiplied out (unless A || B is if !A !B; unless A B
// is if !A || !B). ok is false when that makes more than maxOrTerms terms.
func (c *haproxyCond) orTerms() (terms [][]haproxyAtom, ok bool) {
	if !c.unless {
		return c.terms, true
	}
	terms = [][]haproxyAtom{nil}
	for _, term := range c.terms {
		var next [][]haproxyAtom
		for _, prefix := range terms {
			for _, at := range term {
				at.neg = !at.neg
				if next = append(next, append(slices.Clip(prefix), at)); len(next) > maxOrTerms {
					return nil, false
				}
			}
		}
		terms = next
	}
	return terms, true
}

// termText is a conjunction of atoms as a condition writes it.
func termText(atoms []haproxyAtom) string {
	words := make([]string, len(atoms))
	for i, at := range atoms {
		words[i] = at.String()
	}
	return strings.Join(words, " ")
}

// haproxyPredefined are HAProxy's predefined ACLs that a translation can
// read: always true, or a method.
var haproxyPredefined = map[string]haproxyACL{
	"TRUE": {fetch: "always_true"}, "HTTP": {fetch: "always_true"},
	"METH_GET": {fetch: "method", values: []string{"GET", "HEAD"}}, "METH_POST": {fetch: "method", values: []string{"POST"}},
	"METH_PUT": {fetch: "method", values: []string{"PUT"}}, "METH_DELETE": {fetch: "method", values: []string{"DELETE"}},
	"METH_OPTIONS": {fetch: "method", values: []string{"OPTIONS"}}, "METH_HEAD": {fetch: "method", values: []string{"HEAD"}},
}

// parseACL reads the words after "acl <name>", or inside { }, into a
// definition.
func parseACL(words []string, line int) (haproxyACL, error) {
	if len(words) == 0 {
		return haproxyACL{}, fmt.Errorf("line %d: an ACL without a fetch", line)
	}
	a := haproxyACL{fetch: words[0], line: line}
	rest := words[1:]
	for len(rest) > 0 && strings.HasPrefix(rest[0], "-") && rest[0] != "-" {
		flag := rest[0]
		rest = rest[1:]
		switch flag {
		case "-m", "-f", "-M":
			if len(rest) == 0 {
				return a, fmt.Errorf("line %d: %s without its argument", line, flag)
			}
			if flag == "-m" {
				a.method = rest[0]
			} else {
				a.method, a.file = "file", rest[0]
			}
			rest = rest[1:]
		case "-i":
			a.icase = true
		case "--":
			a.values = append(a.values, rest...)
			return a, nil
		}
		// -n (no DNS) changes nothing a translation reads.
	}
	a.values = append(a.values, rest...)
	return a, nil
}

// parseCond reads a condition: words after if or unless.
func parseCond(words []string, unless bool, acls map[string][]haproxyACL, line int) (*haproxyCond, error) {
	c := &haproxyCond{unless: unless}
	var term []haproxyAtom
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch w {
		case "||", "or":
			if len(term) == 0 {
				return nil, fmt.Errorf("line %d: %s without a term before it", line, w)
			}
			c.terms, term = append(c.terms, term), nil
			continue
		}
		var at haproxyAtom
		for strings.HasPrefix(w, "!") {
			at.neg = !at.neg
			w = w[1:]
			if w == "" {
				if i+1 == len(words) {
					return nil, fmt.Errorf("line %d: ! at the end of a condition", line)
				}
				i++
				w = words[i]
			}
		}
		if w == "{" {
			end := slices.Index(words[i+1:], "}")
			if end < 0 {
				return nil, fmt.Errorf("line %d: { without }", line)
			}
			def, err := parseACL(words[i+1:i+1+end], line)
			if err != nil {
				return nil, err
			}
			at.defs = []haproxyACL{def}
			at.text = strings.Join(words[i:i+end+2], " ")
			i += end + 1
		} else {
			at.name, at.text = w, w
			if defs, ok := acls[w]; ok {
				at.defs = defs
			} else if p, ok := haproxyPredefined[w]; ok {
				at.defs = []haproxyACL{p}
			} else {
				return nil, fmt.Errorf("line %d: ACL %q is not defined before it is used", line, w)
			}
		}
		term = append(term, at)
	}
	if len(term) == 0 {
		return nil, fmt.Errorf("line %d: an empty condition", line)
	}
	c.terms = append(c.terms, term)
	return c, nil
}

// splitCond splits a rule's words at its if or unless: the words before,
// and the condition (nil without one).
func splitCond(words []string, acls map[string][]haproxyACL, line int) ([]string, *haproxyCond, error) {
	for i, w := range words {
		if w == "if" || w == "unless" {
			c, err := parseCond(words[i+1:], w == "unless", acls, line)
			return words[:i], c, err
		}
	}
	return words, nil, nil
}

// haproxyCounter is a rate or count an ACL compares: which stick counter
// (or src lookup), which table, which stored data.
type haproxyCounter struct {
	sc    int    // the stick counter; -1 for a lookup
	table string // "" for the tracker's (or, for a lookup, the section's) table
	data  string // "http_req_rate", "conn_cur", …
	// lookup, for sc -1, is the key the table is looked up by: "src" for
	// src_http_req_rate, the sample before table_http_req_rate(table).
	lookup string
}

var (
	// sc_http_req_rate(0) or sc_http_req_rate(0,table)
	scFetch = regexp.MustCompile(`^sc_([a-z0-9_]+)\(([0-9]+)(?:,([^,()]+))?\)$`)
	// sc0_http_req_rate or sc0_http_req_rate(table)
	scNFetch = regexp.MustCompile(`^sc([0-9])_([a-z0-9_]+)(?:\(([^,()]*)\))?$`)
	// src_http_req_rate or src_http_req_rate(table)
	srcFetch = regexp.MustCompile(`^src_([a-z0-9_]+)(?:\(([^,()]*)\))?$`)
)

// counterOf reads a fetch of stick-table data; ok false for another fetch.
func counterOf(fetch string) (haproxyCounter, bool) {
	if m := scFetch.FindStringSubmatch(fetch); m != nil {
		n, _ := strconv.Atoi(m[2])
		return haproxyCounter{sc: n, table: m[3], data: m[1]}, true
	}
	if m := scNFetch.FindStringSubmatch(fetch); m != nil {
		n, _ := strconv.Atoi(m[1])
		return haproxyCounter{sc: n, table: m[3], data: m[2]}, true
	}
	if m := srcFetch.FindStringSubmatch(fetch); m != nil && m[1] != "port" && m[1] != "is_local" {
		return haproxyCounter{sc: -1, table: m[2], data: m[1], lookup: "src"}, true
	}
	// <sample>,table_http_req_rate(table)
	if parts := splitTopLevel(fetch); len(parts) > 1 {
		last := parts[len(parts)-1]
		if m := tableConv.FindStringSubmatch(last); m != nil {
			return haproxyCounter{sc: -1, table: m[2], data: m[1], lookup: strings.Join(parts[:len(parts)-1], ",")}, true
		}
	}
	return haproxyCounter{}, false
}

// table_http_req_rate(table): a converter looking its input up in a table.
var tableConv = regexp.MustCompile(`^table_([a-z0-9_]+)\(([^,()]+)\)$`)

// threshold reads an integer comparison (gt 10, ge 11, lt 5, le 4) as the
// most a request may find the counter at and pass, where over says the
// atom is true above it: "gt 10" and "ge 11" are true above 10, "le 10"
// and "lt 11" are true at 10 or below (over false).
func threshold(values []string) (most int64, over bool, err error) {
	if len(values) != 2 {
		return 0, false, fmt.Errorf("want an operator and a number, such as gt 10")
	}
	n, err := strconv.ParseInt(values[1], 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("%q is not a number", values[1])
	}
	switch values[0] {
	case "gt":
		return n, true, nil
	case "ge":
		return n - 1, true, nil
	case "le":
		return n, false, nil
	case "lt":
		return n - 1, false, nil
	}
	return 0, false, fmt.Errorf("operator %q: want gt, ge, lt or le", values[0])
}
