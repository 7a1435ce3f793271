package config

// CheckWithoutFiles validates the configuration in data as Parse does but
// opens no file it names: not the keys file, not identity.jwt's jwks_file,
// ca_file or secret_file, not a secret_file or password_file, not a TLS
// certificate, key or CA. Each such field is read as Parse reads it, a
// path made relative to name's folder, but its file's content is not
// checked at all: a configuration that passes may still fail Load where
// a file it names is missing or wrong. Its answer depends on data alone, never on
// the files of the host it runs on, so it may check a configuration that
// someone else wrote for another host (the designer's import); name is the
// file name used in errors.
func CheckWithoutFiles(name string, data []byte) error {
	_, err := parse(name, data, true)
	return err
}

// Stand-ins for the content of a file a configuration checked without
// files names, where the checks that follow need one. They never leave
// CheckWithoutFiles, which returns no configuration.
const (
	// unreadJWKS is a JWK Set of one Ed25519 public key (RFC 8037,
	// appendix A.2), which verifies the algorithms a JWK Set's keys do.
	unreadJWKS = `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}`
	// unreadSecret is 64 bytes, long enough for every HMAC algorithm and
	// the settle secret.
	unreadSecret = "unread-secret-unread-secret-unread-secret-unread-secret-unread-s"
)

// secret returns the secret in the file at path (see ReadSecret), or
// unreadSecret, without opening it, when d reads no named file.
func (d *decoder) secret(path string) (string, error) {
	if d.unread {
		return unreadSecret, nil
	}
	return ReadSecret(path)
}
