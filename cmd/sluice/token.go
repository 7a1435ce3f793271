package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
)

// runToken prints a new caller token and the SHA-256 that the configuration
// stores in its place (admin.callers[].token_sha256).
func runToken(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("token", flag.ContinueOnError)
	fs.SetOutput(stderr)
	name := fs.String("name", "my-caller", "the caller's name in the configuration snippet")
	scopes := fs.String("scopes", "check", "the scopes in the snippet: read, check, override_plan, admin (comma-separated)")
	fs.Usage = func() {
		io.WriteString(stderr, `usage: sluice token [-name NAME] [-scopes SCOPES]

Makes a token for a caller of the admin listener (256 random bits) and prints
it with its SHA-256 and the admin.callers entry that holds the hash, never the
token. (An API key of your API's clients is listed under keys: by its SHA-256:
printf %s KEY | sha256sum.)

flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
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
`, token, hex.EncodeToString(sum[:]), *name, hex.EncodeToString(sum[:]), *scopes)
	return nil
}
