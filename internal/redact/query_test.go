package redact_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/internal/redact"
)

// URL masks the value of a query parameter whose name says it holds a
// secret (a Redis URL's ?password=, a webhook's ?token=, a JWK Set's
// ?access_token=), as it masks a password, and keeps every other
// parameter readable, whatever url.Parse makes of the URL.
func TestURLMasksTheSecretsOfItsQuery(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"a Redis URL's password", "redis://r.example:6379/0?password=hunter2", "redis://r.example:6379/0?password=xxxxx"},
		{"a webhook's token", "https://hooks.example.com/x?token=abc", "https://hooks.example.com/x?token=xxxxx"},
		{"an access token beside a setting kept",
			"https://idp.example.com/keys?tenant=acme&access_token=abc", "https://idp.example.com/keys?tenant=acme&access_token=xxxxx"},
		{"settings kept around a secret, the name in any case",
			"redis://r.example:6379/?db=2&PASSWORD=hunter2&dial_timeout=3s", "redis://r.example:6379/?db=2&PASSWORD=xxxxx&dial_timeout=3s"},
		{"the user information's password and the query's",
			"redis://sluice:hunter2@r.example:6379/0?password=hunter2&db=2", "redis://sluice:xxxxx@r.example:6379/0?password=xxxxx&db=2"},
		{"an @ in another parameter", "https://hooks.example.com/n?to=ops@example.com&token=abc", "https://hooks.example.com/n?to=ops@example.com&token=xxxxx"},
		{"an escape url.Parse refuses", "https://hooks.example.com/x?token=ab%zz&v=1", "https://hooks.example.com/x?token=xxxxx&v=1"},
		{"an escaped name", "redis://r.example:6379?pass%77ord=hunter2", "redis://r.example:6379?pass%77ord=xxxxx"},
		{"a value holding =", "https://blob.example.net/c?sv=2022-11-02&sig=ab%2Bc==", "https://blob.example.net/c?sv=2022-11-02&sig=xxxxx"},
		{"parameters split at ;", "https://hooks.example.com/x?v=1;secret=abc", "https://hooks.example.com/x?v=1;secret=xxxxx"},
		{"a fragment's parameters", "https://app.example.com/cb#access_token=abc&state=xyz", "https://app.example.com/cb#access_token=xxxxx&state=xyz"},
		{"no scheme", "r.example:6379?password=hunter2", "r.example:6379?password=xxxxx"},
		// The "@" ends a user information that holds the query, or is in
		// the secret: both readings are masked.
		{"an @ in a secret after a port", "https://host:8443/?token=ab@cd", "https://host:xxxxx"},
		{"a query in a password", "redis://u:pa?a=b@h/?password=hunter2", "redis://u:xxxxx@h/?password=xxxxx"},
		{"an empty value is kept empty", "redis://r.example:6379/?password=&db=2", "redis://r.example:6379/?password=&db=2"},
		{"a parameter without a value", "https://hooks.example.com/x?token&v=1", "https://hooks.example.com/x?token&v=1"},
		{"no secret", "https://api.example.com/v1?q=key+lime&db=2#top", "https://api.example.com/v1?q=key+lime&db=2#top"},
	} {
		if got := redact.URL(c.in); got != c.want {
			t.Errorf("%s: URL(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
	}
}

// A parameter holds a secret when a word of its name, in any case, is or
// ends in one of the words secrets are named by: its runs of letters, and
// their parts split where a lower-case letter is followed by a capital.
func TestURLReadsASecretsNameByItsWords(t *testing.T) {
	for _, name := range []string{
		"password", "pass", "passwd", "pwd", "secret", "token", "access_token", "api_key", "apikey", "key",
		"auth", "sig", "signature", "client_secret", "X-Amz-Signature", "accessToken", "APIKey", "X-Api-Key",
		"Password", "TOKEN", "db_password", "refresh_token", "jwt", "X-Amz-Credential", "password2", "keys",
		"accessTokenId", "tokeN", "tOKEN", "Pass_Word",
	} {
		s := "https://h.example.com/p?" + name + "=hunter2"
		if got, want := redact.URL(s), "https://h.example.com/p?"+name+"=xxxxx"; got != want {
			t.Errorf("URL(%q) = %q, want %q", s, got, want)
		}
	}
	for _, name := range []string{"db", "q", "tenant", "dial_timeout", "protocol", "to", "state", "v", "keyspace", "signal", "author"} {
		s := "https://h.example.com/p?" + name + "=2"
		if got := redact.URL(s); got != s {
			t.Errorf("URL(%q) = %q, want it kept", s, got)
		}
	}
}

// A secret in the query is never shown, whatever it holds (an "@", which
// could end a user information, a "?" or a "/") and whatever is before
// it: a user information with a password, a port, a path, or nothing.
func FuzzURLNeverShowsASecretOfItsQuery(f *testing.F) {
	f.Add("https://hooks.example.com/x", "token", "abc", "")
	f.Add("redis://r.example:6379/0", "password", "hunter2", "&db=2")
	f.Add("https://h:8443/p", "access_token", "ab@cd", "")
	f.Add("redis://u:pa?a=b@h/", "Password", "y", "#top")
	f.Add("r.example:6379", "X-Amz-Signature", "a/b?c", ";v=1")
	f.Add("0", "tokeN", "1", "")
	f.Fuzz(func(t *testing.T, before, name, value, after string) {
		if !secretName(name) || strings.ContainsAny(value, "&;#") || (after != "" && !strings.ContainsAny(after[:1], "&;#")) {
			t.Skip()
		}
		// The parameter is one: what is before it holds no query whose last
		// parameter it would be the value of, and its name is whole (an "="
		// in it would end it: "=_token=1" is the empty name's).
		if strings.ContainsAny(before, "&;#=") || strings.ContainsAny(name, "&;#=") {
			t.Skip()
		}
		if !shownNowhereElse(value, before+name+after+"?=") {
			t.Skip()
		}
		s := before + "?" + name + "=" + value + after
		if got := redact.URL(s); strings.Contains(got, value) {
			t.Fatalf("URL(%q) = %q: shows the secret %q", s, got, value)
		}
	})
}

// secretName says whether name is, in any case, one of the names a
// secret is given, possibly escaped or prefixed.
func secretName(name string) bool {
	for _, s := range []string{"password", "pass", "passwd", "pwd", "secret", "token", "access_token", "api_key", "apikey", "key",
		"auth", "sig", "signature", "client_secret"} {
		if strings.EqualFold(name, s) || strings.HasSuffix(strings.ToLower(name), "_"+s) {
			return true
		}
	}
	return false
}

// A ";" ends no secret's value: the servers a webhook or a JWK Set URL
// reaches (the WHATWG URL standard, Python's parse_qs since 3.9.2, Node's
// URLSearchParams; Go's url.ParseQuery refuses the pair) read
// "token=s3cr3t;tail" as one value, and net/http sends the query as
// written, so the whole of it is masked.
func TestURLMasksASecretsValuePastASemicolon(t *testing.T) {
	for in, want := range map[string]string{
		"https://hooks.example.com/notify?token=s3cr3t;Zq8tail":                "https://hooks.example.com/notify?token=xxxxx",
		"https://idp.example.com/keys?access_token=s3cr3t;Zq8tail&tenant=acme": "https://idp.example.com/keys?access_token=xxxxx&tenant=acme",
		"https://h.example.com/?token=;Zq8tail#x":                              "https://h.example.com/?token=xxxxx#x",
	} {
		if got := redact.URL(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}
