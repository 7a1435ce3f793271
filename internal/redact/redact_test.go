package redact_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/internal/redact"
)

// URL masks the password of a URL's user information and keeps the
// rest as written, whether url.Parse reads the URL, refuses it, or reads
// its user name as a scheme.
func TestURLMasksThePasswordWhateverURLParseMakesOfIt(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"a URL url.Parse reads is shown as url.URL.Redacted shows it",
			"https://user:secret@api.internal:8443/v1?q=1", "https://user:xxxxx@api.internal:8443/v1?q=1"},
		{"an empty user name is kept empty",
			"rediss://:secret@r.example:6380/0", "rediss://:xxxxx@r.example:6380/0"},
		{"a password with an escape url.Parse refuses",
			"https://idp:hunter2%secret@idp.example.com/keys", "https://idp:xxxxx@idp.example.com/keys"},
		{"a password with a character userinfo may not hold",
			"http://admin:hunter2^x@127.0.0.1:1/readyz", "http://admin:xxxxx@127.0.0.1:1/readyz"},
		{"a password with a slash, which url.Parse reads as a port and a path",
			"redis://sluice:123/secret@r.example:6379", "redis://sluice:xxxxx@r.example:6379"},
		{"a password with an @",
			"https://user:p@ss@api.internal/", "https://user:xxxxx@api.internal/"},
		{"the scheme left out, which url.Parse reads the user name as",
			"admin:hunter2@127.0.0.1:1/readyz", "admin:xxxxx@127.0.0.1:1/readyz"},
		{"a scheme url.Parse reads but nothing serves",
			"ftp://deploy:secret@api.internal:8080", "ftp://deploy:xxxxx@api.internal:8080"},
		{"no host",
			"https://deploy:secret@:8443/", "https://deploy:xxxxx@:8443/"},
		{"a user information without a colon is masked whole",
			"redis://secret@r.example:6379", "redis://xxxxx@r.example:6379"},
		{"an @ in the path is kept with all before it",
			"https://hooks.example.com/notify?to=ops@example.com", "https://hooks.example.com/notify?to=ops@example.com"},
		{"an @ in the path after a port masks the port and the path before it",
			"https://hooks.example.com:8443/to/ops@example.com", "https://hooks.example.com:xxxxx@example.com"},
		{"a URL without user information is kept",
			"http://127.0.0.1:9090/readyz", "http://127.0.0.1:9090/readyz"},
		{"a host and port is kept", "r.example:6379", "r.example:6379"},
		{"an empty string is kept", "", ""},
	} {
		if got := redact.URL(c.in); got != c.want {
			t.Errorf("%s: URL(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
	}
}

// What url.Parse reads a user name and a password of, URL shows as
// url.URL.Redacted does, so long as no "@" follows the host.
func TestURLAgreesWithRedactedOnURLsURLParseReads(t *testing.T) {
	for _, s := range []string{
		"https://user:secret@api.internal",
		"http://user:se%20cret@127.0.0.1:8080/readyz?verbose=1#top",
		"https://user:secret@[::1]:443/",
		"h2c://a.b-c:s@h/p",
	} {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if got, want := redact.URL(s), u.Redacted(); got != want {
			t.Errorf("URL(%q) = %q, url.URL.Redacted %q", s, got, want)
		}
	}
}

// No password is ever shown, whatever it holds and whatever surrounds it,
// written after a scheme or without one. The one reading URL cannot make
// is left out: a password beginning with "//" after a user name that
// could be a scheme, with no scheme before them (user://secret@host is
// the scheme user's URL).
func FuzzURLNeverShowsThePassword(f *testing.F) {
	f.Add("https", "idp", "hunter2%secret", "idp.example.com/keys")
	f.Add("http", "admin", "hunter2^x", "127.0.0.1:1/readyz")
	f.Add("", "admin", "hunter2", "127.0.0.1:1/readyz")
	f.Add("redis", "sluice", "hunter2/secret", "r.example:6379")
	f.Add("redis", "", "p@ss/w?o#rd", "r.example:6379/0?x=a@b")
	f.Add("ftp", "deploy", "hunter2", "api.internal:8080")
	f.Fuzz(func(t *testing.T, scheme, user, password, rest string) {
		if strings.Contains(user, ":") { // the user name ends at the first ":"
			t.Skip()
		}
		s := user + ":" + password + "@" + rest
		if scheme != "" {
			s = scheme + "://" + s
		} else if strings.HasPrefix(password, "//") {
			t.Skip()
		}
		if !shownNowhereElse(password, scheme+user+rest) {
			t.Skip()
		}
		if got := redact.URL(s); strings.Contains(got, password) {
			t.Fatalf("URL(%q) = %q: shows the password %q", s, got, password)
		}
	})
}

// shownNowhereElse says whether password holds a byte that neither the
// rest of the URL (others) nor what URL writes ("://", ":", "@",
// "xxxxx") holds: a password that URL's answer could hold only by showing
// it.
func shownNowhereElse(password, others string) bool {
	for _, c := range []byte(password) {
		if strings.IndexByte(others+":/@x", c) < 0 {
			return true
		}
	}
	return false
}
