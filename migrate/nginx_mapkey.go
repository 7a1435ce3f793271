package migrate

import "strings"

// nginxSetPatterns are the regular expressions of a map entry that match
// every value of one character or more: a variable that is set.
var nginxSetPatterns = map[string]bool{
	"~.": true, "~.+": true, "~^.+$": true, "~^.+": true, "~.+$": true,
	"~*.": true, "~*.+": true, "~*^.+$": true, "~*^.+": true, "~*.+$": true,
}

// orAddressMap reads nginx's usual key "a variable when it is set, else
// the client address":
//
//	map $http_x_api_key $rl_key { default $binary_remote_addr; "~.+" $http_x_api_key; }
//	map $http_x_api_key $rl_key { "" $binary_remote_addr; default $http_x_api_key; }
//
// where the source is a header, a query parameter or a cookie, which a
// rule's key reads alone. It returns the map's variable (dst) and its
// source (src), and ok false for any other map.
func orAddressMap(d directive) (dst, src string, ok bool) {
	if len(d.args) != 2 || len(d.block) != 2 {
		return "", "", false
	}
	src, dst = d.args[0], d.args[1]
	if kind, attrs := nginxKeyKind(src, false); kind != keyAttrs || len(attrs) != 1 ||
		!strings.HasPrefix(attrs[0], "header:") && !strings.HasPrefix(attrs[0], "query:") && !strings.HasPrefix(attrs[0], "cookie:") {
		return "", "", false
	}
	address := func(v string) bool { return v == "$binary_remote_addr" || v == "$remote_addr" }
	var def, set, unset string
	for _, e := range d.block {
		if len(e.args) != 1 || e.hasBlock {
			return "", "", false
		}
		switch {
		case e.name == "default":
			def = e.args[0]
		case nginxSetPatterns[e.name]:
			set = e.args[0]
		case e.name == "":
			unset = e.args[0]
		default:
			return "", "", false
		}
	}
	if address(def) && set == src || address(unset) && def == src {
		return dst, src, true
	}
	return "", "", false
}

// methodMap reads a key that counts some methods by address and leaves
// the others out, which nginx does not count (an empty key):
//
//	map $request_method $post_key { default ""; POST $binary_remote_addr; }
//
// It returns the map's variable (dst) and the methods counted, and ok
// false for any other map.
func methodMap(d directive) (dst string, methods []string, ok bool) {
	if len(d.args) != 2 || d.args[0] != "$request_method" {
		return "", nil, false
	}
	var by string
	for _, e := range d.block {
		if len(e.args) != 1 || e.hasBlock {
			return "", nil, false
		}
		v := e.args[0]
		switch {
		case e.name == "default":
			if v != "" {
				return "", nil, false
			}
		case !validHeaderName(e.name) || strings.ToUpper(e.name) != e.name:
			return "", nil, false
		case v == "":
		case (v == "$binary_remote_addr" || v == "$remote_addr") && (by == "" || by == v):
			by = v
			methods = append(methods, e.name)
		default:
			return "", nil, false
		}
	}
	if len(methods) == 0 {
		return "", nil, false
	}
	return d.args[1], methods, true
}
