package config

import (
	"go.yaml.in/yaml/v3"
)

// minSettleSecret is the fewest bytes of a settle secret: 256 bits as hex
// (openssl rand -hex 32) is 64.
const minSettleSecret = 32

// Settle configures the ids of the decision API's settlements
// (POST /v1/settle).
type Settle struct {
	// Secret, read from secret_file, signs each id, which then holds what
	// its settlement needs: any instance with the same secret (and the
	// same limits) settles it, once. Nil: ids are held by the instance
	// that gave them, and only it settles them.
	Secret     []byte
	SecretFile string
}

// settle decodes the settle section:
//
//	settle:
//	  secret_file: settle.secret   # the fleet's shared secret, at least 32 bytes
func (d *decoder) settle(n *yaml.Node, path string, s *Settle) {
	d.Mapping(n, path, map[string]field{
		"secret_file": func(n *yaml.Node, p string) {
			if s.SecretFile = d.file(n, p); s.SecretFile == "" {
				return // refused by file
			}
			secret, err := d.secret(s.SecretFile)
			switch {
			case err != nil:
				d.Errorf(n, p, "%v", err)
			case len(secret) < minSettleSecret:
				d.Errorf(n, p, "the secret in %s has %d bytes: give at least %d (openssl rand -hex 32)", s.SecretFile, len(secret), minSettleSecret)
			}
			s.Secret = []byte(secret)
		},
	})
}
