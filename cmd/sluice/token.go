package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode"

	"github.com/sluice-dev/sluice/config"
)

const tokenUsage = `usage: sluice token [-name NAME] [-scopes SCOPES]

Makes a token for a caller of the admin listener (256 random bits) and prints
it with its SHA-256 and the admin.callers entry that holds the hash, never the
token. (An API key of your API's clients is listed under keys: by its SHA-256:
printf %s KEY | sha256sum.)

flags:
`

// runToken prints a new caller token and the SHA-256 that the configuration
// stores in its place (admin.callers[].token_sha256).
func runToken(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("token", tokenUsage, stderr)
	name := fs.String("name", "my-caller", "the caller's name in the configuration snippet")
	scopes := fs.String("scopes", "check", "the scopes in the snippet: read, check, override_plan, admin (comma-separated)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("unexpected argument %q", fs.Arg(0))
	}
	scopeList, err := tokenScopes(*scopes)
	if err != nil {
		return err
	}
	if *name == "" {
		return usageErrorf("-name: every caller has a name for the logs")
	}
	if strings.ContainsFunc(*name, unicode.IsControl) {
		return usageErrorf("-name %q holds a control character: the name is written to logs and tables, whose lines it would split", *name)
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return fmt.Errorf("reading random bytes: %w", err)
	}
	token := "sluice_" + base64.RawURLEncoding.EncodeToString(b[:])
	sum := sha256.Sum256([]byte(token))
	fmt.Fprintf(stdout, `token:  %s
sha256: %s

Give the token to the caller (Authorization: Bearer <token>, or Sluice-Token:
<token> for forward-auth) and put only its hash in the configuration:

admin:
  callers:
    - name: %s
      token_sha256: %s
      scopes: [%s]
`, token, hex.EncodeToString(sum[:]), yamlScalar(*name), hex.EncodeToString(sum[:]), strings.Join(scopeList, ", "))
	return nil
}

// tokenScopes reads -scopes: a comma-separated list of the scopes the
// configuration knows (config.Scopes), at least one; a usageError otherwise.
func tokenScopes(list string) ([]string, error) {
	var known []string
	for i := range 8 {
		if n := config.Scopes(1 << i).String(); n != "" {
			known = append(known, n)
		}
	}
	var out []string
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		if !slices.Contains(known, s) {
			return nil, usageErrorf("-scopes: unknown scope %q (want one or more of %s)", s, strings.Join(known, ", "))
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, usageErrorf("-scopes: list what the caller may do (%s)", strings.Join(known, ", "))
	}
	return out, nil
}

// yamlScalar writes s as a YAML string: as it is when it is plain
// letters, digits, '.', '_' and '-', not null and not starting with '-' (a
// sequence's entry), else double-quoted as a JSON string, which YAML reads
// back as s, its quotes and backslashes escaped.
func yamlScalar(s string) string {
	plain := s != "" && !strings.EqualFold(s, "null") && !strings.HasPrefix(s, "-")
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			plain = false
		}
	}
	if plain {
		return s
	}
	q, _ := json.Marshal(s)
	return string(q)
}
