package yamlcheck

import "strings"

// EnvVariable reports whether s holds a reference to an environment
// variable, as shells and Compose files write one: ${NAME}, or with a
// default or a message (${NAME:-default}, ${NAME-default}, ${NAME:?msg},
// ${NAME:+alt} …), alone or within the text ("${REDIS_HOST}:6379"). "$$"
// is Compose's escape of a dollar, so "$${NAME}" is none (and is read as
// it is, both dollars). The configuration refuses a value that holds one,
// and the designer writes none.
func EnvVariable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '$' {
			continue
		}
		if strings.HasPrefix(s[i:], "$$") {
			i++
			continue
		}
		if rest, ok := strings.CutPrefix(s[i:], "${"); ok && envReference(rest) {
			return true
		}
	}
	return false
}

// BareVariable reports whether s is a variable as shells and Compose also
// write one, without braces: "$" and a name ($REDIS_PASSWORD), the whole
// value. A dollar anywhere else is text ("pa$word", "$5", "$$NAME").
func BareVariable(s string) bool {
	name, ok := strings.CutPrefix(s, "$")
	return ok && envName(name) == len(name) && name != ""
}

// envName returns the length of the variable name s starts with: a letter
// or "_", then letters, digits and "_".
func envName(s string) int {
	n := 0
	for n < len(s) && (s[n] == '_' || 'A' <= s[n] && s[n] <= 'Z' || 'a' <= s[n] && s[n] <= 'z' || n > 0 && '0' <= s[n] && s[n] <= '9') {
		n++
	}
	return n
}

// envReference reports whether s, what follows a "${", is a variable's
// name followed by "}" or by an operator of shell parameter expansion
// (:- - := = :? ? :+ +) and then, somewhere, "}".
func envReference(s string) bool {
	n := envName(s)
	if n == 0 || n == len(s) {
		return false
	}
	rest := strings.TrimPrefix(s[n:], ":")
	switch {
	case s[n] == '}':
		return true
	case rest != "" && strings.ContainsRune("-=?+", rune(rest[0])):
		return strings.Contains(rest, "}")
	}
	return false
}
