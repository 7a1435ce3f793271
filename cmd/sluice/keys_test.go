package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/jwttest"
	"github.com/sluice-dev/sluice/internal/testpki"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// TestKeysCommand: sluice keys top, inspect and reset against a running
// server's admin listener, with a caller token holding the admin scope.
func TestKeysCommand(t *testing.T) {
	keys, get := keysAgainst(t, "")
	for range 3 {
		get()
	}
	out, err := keys("top")
	if err != nil || !strings.Contains(out, "ip:127.0.0.1  ip:") || !strings.Contains(out, "free  1") {
		t.Errorf("top: %v\n%s", err, out)
	}
	out, err = keys("inspect", "ip:127.0.0.1")
	if err != nil || !strings.Contains(out, "per-minute  fixed-window  2         1m      2     0  ") {
		t.Errorf("inspect: %v\n%s", err, out)
	}
	out, err = keys("reset", "ip:127.0.0.1")
	if err != nil || out != "reset ip:127.0.0.1: [per-minute] (1 states forgotten)\n" {
		t.Errorf("reset: %v %q", err, out)
	}
	if out, _ = keys("inspect", "ip:127.0.0.1"); !strings.Contains(out, "  0     2          0s") {
		t.Errorf("inspect after the reset:\n%s", out)
	}
	if _, err = keys("-token", "", "top"); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("without a token: %v, want a 401", err)
	}
	if _, err := keys("penalize", "ip:127.0.0.1"); err == nil || !strings.Contains(err.Error(), "409 Conflict: httplimit: no penalty box is configured") {
		t.Errorf("penalize without a penalty box: %v, want the 409's detail", err)
	}
}

// TestKeysCommandSaysAnExemptClientIsExempt: inspect says when the
// subject's client is exempt, whose states no request spends, and
// penalize is refused with the exemption named.
func TestKeysCommandSaysAnExemptClientIsExempt(t *testing.T) {
	keys, _ := keysAgainst(t, "exempt: {addresses: [127.0.0.0/8]}\npenalty: {refusals: 3, within: 1m, for: 10m}\n")
	if out, err := keys("inspect", "ip:127.0.0.1"); err != nil || !strings.HasPrefix(out, "ip:127.0.0.1 is exempt (by address): no request of it spends these\n") {
		t.Errorf("inspect: %v\n%s", err, out)
	}
	if _, err := keys("penalize", "ip:127.0.0.1"); err == nil || !strings.Contains(err.Error(), "409 Conflict") || !strings.Contains(err.Error(), "exempt.addresses: 127.0.0.0/8") {
		t.Errorf("penalize of an exempt client: %v, want the 409 naming the exemption", err)
	}
	if out, err := keys("inspect", "ip:10.0.0.1"); err != nil || strings.Contains(out, "exempt") {
		t.Errorf("inspect of another client: %v\n%s", err, out)
	}
}

// TestKeysCommandPenalizes: sluice keys penalize puts a client in the
// penalty box, inspect shows it, reset -limit penalty takes it out.
func TestKeysCommandPenalizes(t *testing.T) {
	keys, status := keysAgainst(t, "penalty: {refusals: 3, within: 1m, for: 10m}\n")
	out, err := keys("penalize", "ip:127.0.0.1")
	if err != nil || out != "ip:127.0.0.1 is in the penalty box for 10m0s\n" {
		t.Fatalf("penalize: %v %q", err, out)
	}
	if code := status(); code != 429 {
		t.Errorf("a request in the box: %d, want 429", code)
	}
	// In the box: used 1, full again in (a little under, on a busy machine) 10 minutes.
	if out, _ := keys("inspect", "ip:127.0.0.1"); !regexp.MustCompile(`\npenalty +gcra +1 +10m +1 +0 +(10m0s|9m5\d)`).MatchString(out) {
		t.Errorf("inspect does not show the box:\n%s", out)
	}
	// Releasing the box forgets the refusals that filled it too.
	if out, err := keys("-limit", "penalty", "reset", "ip:127.0.0.1"); err != nil || !strings.Contains(out, "[penalty penalty-refusals] (1 states forgotten)") {
		t.Errorf("reset -limit penalty: %v %q", err, out)
	}
	if code := status(); code != 200 {
		t.Errorf("after the reset: %d, want 200", code)
	}
}

// opsConfig is a server's configuration with one caller, ops (token
// test-token, the admin scope), and a plan of 2 requests a minute.
const opsConfig = `
admin:
  callers:
    - {name: ops, token_sha256: 4c5dc9b7708905f77f5e5d16316b5dfb425e68cb326dcd55a860e90a7707031e, scopes: [admin]} # test-token
plans:
  free:
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 2, window: 1m}]
`

// keysAgainst serves opsConfig and more, and returns sluice keys run
// against its admin listener as ops (flags given later override those),
// and a GET of its API that returns the status.
func keysAgainst(t *testing.T, more string) (keys func(args ...string) (string, error), get func() int) {
	t.Helper()
	srv := keysServer(t, "k.yaml", opsConfig+more)
	admin := httptest.NewServer(srv.AdminHandler())
	t.Cleanup(admin.Close)
	api := httptest.NewServer(srv.PublicHandler())
	t.Cleanup(api.Close)
	keys = func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := runKeys(context.Background(), append([]string{"-admin", admin.URL, "-token", "test-token"}, args...), &out, &errOut)
		return out.String(), err
	}
	get = func() int {
		resp, err := http.Get(api.URL + "/x")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	return keys, get
}

// TestKeysCommandOverMutualTLS: with admin.tls and a caller identified by
// its certificate, sluice keys verifies the listener with -cacert and
// presents -cert/-key; without them it is refused, and says why.
func TestKeysCommandOverMutualTLS(t *testing.T) {
	ca := testpki.New(t, "admin CA")
	ca.Server(t, "admin")
	ca.Client(t, "ops.internal")
	ca.Client(t, "nobody.internal")
	srv := keysServer(t, filepath.Join(ca.Dir, "k.yaml"), `
admin:
  tls: {cert_file: admin.pem, key_file: admin-key.pem, client_ca_file: ca.pem}
  loopback_scopes: []
  callers:
    - {name: ops, certificate: ops.internal, scopes: [admin]}
plans:
  free:
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 2, window: 1m}]
`)
	// The server's own listeners, with the configured TLS.
	pub, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	adm, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, server.Listeners{Public: pub, Admin: adm}) }()
	t.Cleanup(func() { stop(); <-served })
	adminURL := "https://" + adm.Addr().String()
	keys := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := runKeys(context.Background(), append([]string{"-admin", adminURL, "-token", ""}, append(args, "top")...), &out, &errOut)
		return out.String(), err
	}
	if out, err := keys("-cacert", ca.File("ca"), "-cert", ca.File("ops.internal"), "-key", ca.KeyFile("ops.internal")); err != nil || !strings.HasPrefix(out, "SUBJECT") {
		t.Errorf("with the CA and the ops certificate: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		// Refused in the handshake; under TLS 1.3 the client may learn it
		// only on its first read, which HTTP/2 reports in words of its own:
		// what matters is that no answer came.
		{[]string{"-cacert", ca.File("ca")}, ""},
		{[]string{"-cacert", ca.File("ca"), "-cert", ca.File("nobody.internal"), "-key", ca.KeyFile("nobody.internal")}, "401"},
		{[]string{"-cert", ca.File("ops.internal"), "-key", ca.KeyFile("ops.internal")}, "certificate signed by unknown authority"},
		{[]string{"-cacert", ca.File("ca"), "-cert", ca.File("ops.internal")}, "-cert and -key go together"},
	} {
		_, err := keys(tc.args...)
		var transport *url.Error
		if tc.want == "" && !errors.As(err, &transport) {
			t.Errorf("%q: %v, want a failed connection, no answer", tc.args, err)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error saying %q", tc.args, err, tc.want)
		}
	}
}

// -token-file reads the token from a file, as a mounted secret holds it.
func TestKeysCommandTokenFile(t *testing.T) {
	var got string
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("Authorization")
		w.Write([]byte("[]"))
	}))
	t.Cleanup(admin.Close)
	file := filepath.Join(t.TempDir(), "token")
	os.WriteFile(file, []byte("sluice_from-a-file\n"), 0o600)
	if err := runKeys(context.Background(), []string{"-admin", admin.URL, "-token-file", file, "top"}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if got != "Bearer sluice_from-a-file" {
		t.Errorf("Authorization: %q, want the file's token", got)
	}
}

// keysServer is a server of the configuration text, named file (its
// relative paths are read from file's folder), on a memory store that
// decides at keysAt.
func keysServer(t *testing.T, file, text string) *server.Server {
	t.Helper()
	cfg, err := config.Parse(file, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New(memory.WithClock(func() time.Time { return keysAt }), memory.WithSweepInterval(0))
	t.Cleanup(func() { store.Close() })
	srv, err := server.New(server.Options{Config: cfg, Store: store, Memory: store, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// keysAt is the time of every decision keysServer's store makes: its
// clock stands still, 30 s into a minute and an hour, so that a test's
// requests all fall in one window of the per-minute fixed windows it
// serves (on the wall clock, a minute that ended between two requests
// admitted a second window's quantity).
var keysAt = time.Date(2026, time.January, 5, 10, 20, 30, 0, time.UTC)

// TestKeysCommandExplainsAToken: sluice keys token says whom a token names,
// or why it names no one, reading it from a file.
func TestKeysCommandExplainsAToken(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	os.WriteFile(secret, []byte("a-secret-shared-with-the-issuer-32b\n"), 0o600)
	keys, _ := keysAgainst(t, "identity:\n  jwt: {secret_file: "+secret+", plan_claim: plan}\n")
	sign := func(key string, claims map[string]any) string {
		s := jwttest.Sign(t, jose.HS256, []byte(key), "", claims)
		file := filepath.Join(dir, "token")
		os.WriteFile(file, []byte(s+"\n"), 0o600)
		return file
	}
	out, err := keys("token", sign("a-secret-shared-with-the-issuer-32b", map[string]any{"sub": "alice", "plan": "gold", "org": "acme"}))
	if err != nil || !strings.Contains(out, "SUBJECT  user:alice\nPLAN     free (the token names \"gold\", not a plan)\nCLAIM    org") {
		t.Errorf("a good token: %v\n%s", err, out)
	}
	out, err = keys("token", sign("not-the-issuers-secret-of-32-bytes", map[string]any{"sub": "alice"}))
	if err != nil || !strings.HasPrefix(out, "not verified (signature): ") {
		t.Errorf("a forged token: %v\n%s", err, out)
	}
	if _, err := keys("token", filepath.Join(dir, "none")); err == nil {
		t.Error("a missing token file: no error")
	}
}

// The caller token in $SLUICE_TOKEN is a secret: sluice keys sends it, and
// never prints it, not in its usage (-h, or a command it cannot read).
func TestKeysUsageNeverPrintsTheTokenOfTheEnvironment(t *testing.T) {
	t.Setenv("SLUICE_TOKEN", "sluice_secret-of-the-environment")
	for _, args := range [][]string{{"keys", "-h"}, {"keys"}, {"keys", "-no-such-flag"}} {
		var out, errOut bytes.Buffer
		run(context.Background(), args, &out, &errOut)
		if s := out.String() + errOut.String(); strings.Contains(s, "secret-of-the-environment") {
			t.Errorf("%q prints the token of $SLUICE_TOKEN:\n%s", args, s)
		}
	}
	var got string
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("Authorization")
		w.Write([]byte("[]"))
	}))
	t.Cleanup(admin.Close)
	if err := runKeys(context.Background(), []string{"-admin", admin.URL, "top"}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if got != "Bearer sluice_secret-of-the-environment" {
		t.Errorf("Authorization: %q, want the token of $SLUICE_TOKEN", got)
	}
	if err := runKeys(context.Background(), []string{"-admin", admin.URL, "-token", "", "top"}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if got != "" {
		t.Errorf("with -token \"\": Authorization %q, want none", got)
	}
}

// sluice keys pointed at something other than an admin listener (the
// public listener, whose upstream answers every path; another service)
// says that the answer is not the admin listener's, in words: never Go's
// names of its own types, never an empty reason.
func TestKeysCommandSaysTheAnswerIsNotTheAdminListeners(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{"a JSON object of another service", 200, `{"hello":"world"}`, "not an answer of sluice's admin listener"},
		{"a web page", 200, "<html>hello</html>", "not an answer of sluice's admin listener"},
		{"a 404 in plain text", 404, "404 page not found\n", "404 Not Found: 404 page not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			}))
			defer other.Close()
			err := runKeys(context.Background(), []string{"-admin", other.URL, "top"}, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "Go value") || strings.HasSuffix(err.Error(), ": ") {
				t.Errorf("%v, want an error saying %q", err, tc.want)
			}
		})
	}
}

// -admin is a URL: an address without its scheme, as an operator types
// it from admin.listen, is refused with what to write instead.
func TestKeysCommandWantsTheAdminListenersURL(t *testing.T) {
	for _, admin := range []string{"127.0.0.1:9090", "localhost:9090", "ftp://127.0.0.1:9090", "http://"} {
		err := runKeys(context.Background(), []string{"-admin", admin, "top"}, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "-admin") || !strings.Contains(err.Error(), "http://127.0.0.1:9090") {
			t.Errorf("-admin %q: %v, want an error that shows the URL to write", admin, err)
		}
	}
}

// Refused for want of a token it never sent, sluice keys says where it
// reads one from, not only the server's words for a caller of any kind.
func TestKeysCommandWithoutATokenSaysWhereItReadsOne(t *testing.T) {
	t.Setenv("SLUICE_TOKEN", "")
	keys, _ := keysAgainst(t, "")
	_, err := keys("-token", "", "top")
	if err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "no token was sent (-token, -token-file or $SLUICE_TOKEN)") {
		t.Errorf("%v, want the 401 and where a token is read from", err)
	}
	if _, err := keys("-token", "not-the-token", "top"); err == nil || strings.Contains(err.Error(), "no token was sent") {
		t.Errorf("a wrong token: %v, want a 401 that does not say no token was sent", err)
	}
}

// -token and -token-file name the same thing: both given is a command line
// keys cannot read, not a silent choice of one.
func TestKeysCommandRefusesTwoTokens(t *testing.T) {
	file := filepath.Join(t.TempDir(), "token")
	os.WriteFile(file, []byte("sluice_from-a-file\n"), 0o600)
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"keys", "-admin", "http://127.0.0.1:1", "-token", "sluice_on-the-line", "-token-file", file, "top"}, &out, &errOut)
	if code != 2 || !strings.Contains(errOut.String(), "-token and -token-file") {
		t.Errorf("exit %d, stderr %q; want 2 and a reason naming both flags", code, errOut.String())
	}
}

// A flag written after the subcommand, where the flag package stops
// reading, is named as such, not answered with the list of subcommands.
func TestKeysCommandSaysFlagsGoFirst(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"keys", "inspect", "ip:192.0.2.1", "-plan", "pro"}, &out, &errOut)
	if code != 2 || !strings.Contains(errOut.String(), `flag -plan after "inspect": flags go first (sluice keys -plan … inspect …)`) {
		t.Errorf("exit %d, stderr:\n%s", code, errOut.String())
	}
}

// An admin listener whose certificate the system's roots do not sign is
// refused, and the error names the flag that trusts its CA.
func TestKeysCommandNamesCacertForAnUnknownAuthority(t *testing.T) {
	admin := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("[]")) }))
	defer admin.Close()
	err := runKeys(context.Background(), []string{"-admin", admin.URL, "top"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "certificate signed by unknown authority") || !strings.Contains(err.Error(), "-cacert") {
		t.Errorf("%v, want the unknown authority and -cacert named", err)
	}
}

// $SLUICE_TOKEN set from a file or a Kubernetes Secret often ends in a
// newline: it is read as -token-file reads a file, without the spaces
// around it.
func TestKeysCommandTrimsTheTokenOfTheEnvironment(t *testing.T) {
	t.Setenv("SLUICE_TOKEN", "sluice_from-a-secret\n")
	var got string
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("Authorization")
		w.Write([]byte("[]"))
	}))
	defer admin.Close()
	if err := runKeys(context.Background(), []string{"-admin", admin.URL, "top"}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if got != "Bearer sluice_from-a-secret" {
		t.Errorf("Authorization: %q, want the token without its newline", got)
	}
}

// A password in -admin is a secret: keys never prints it, whether the
// listener refuses, answers what keys cannot read, or -admin is refused.
func TestKeysNeverPrintsThePasswordOfAdmin(t *testing.T) {
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusInternalServerError)
	}))
	defer refusing.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "<html>") }))
	defer other.Close()
	withPassword := func(u string) string { return strings.Replace(u, "://", "://ops:s3cret-pw@", 1) }
	for _, admin := range []string{withPassword(refusing.URL), withPassword(other.URL), withPassword("ftp://127.0.0.1:1")} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), []string{"keys", "-admin", admin, "-token", "t", "top"}, &out, &errOut)
		if said := out.String() + errOut.String(); code == 0 || strings.Contains(said, "s3cret-pw") || !strings.Contains(said, "127.0.0.1") {
			t.Errorf("-admin %s: exit %d, printed the password (or not the URL):\n%s", admin, code, said)
		}
	}
}

// A mistyped subject is an error that lists the subjects there are, not
// a full quota; the usage lists them too, a decision API client's
// ("ext:<subject>") among them.
func TestKeysCommandRefusesASubjectThatNamesNoClient(t *testing.T) {
	keys, _ := keysAgainst(t, "")
	for _, cmd := range []string{"inspect", "reset"} {
		out, err := keys(cmd, "usr:alice")
		if err == nil || !strings.Contains(err.Error(), "400 Bad Request") || !strings.Contains(err.Error(), "ext:<") {
			t.Errorf("%s usr:alice: %v %q; want the 400 listing the subjects", cmd, err, out)
		}
	}
	var out, errOut bytes.Buffer
	run(context.Background(), []string{"keys", "-h"}, &out, &errOut)
	for _, form := range []string{"key:<", "name:<", "user:<", "user#<", "ip:<", "ip:unknown", "ext:<", "rule:<"} {
		if !strings.Contains(out.String()+errOut.String(), form) {
			t.Errorf("sluice keys -h does not list %s…:\n%s", form, out.String()+errOut.String())
		}
	}
}
