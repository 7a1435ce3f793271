package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/redact"
)

const keysUsage = `usage: sluice keys [flags] top | inspect SUBJECT | reset SUBJECT | penalize SUBJECT | token FILE

Subjects are "key:<sha256 hex>", "name:<listed key's name>", "user:<id>",
"user#<32 hex digits>" (a hashed user id), "ip:<address or its group>",
"ip:unknown", "ext:<subject>" (a decision API caller's), "rule:<rule>/<values>"
(a rule key's values joined by "|", as requests send them or as the store keeps
them) or "*" (the global limits); the server refuses any other text. A flag
given an empty value (-limit "") is refused, not read as left out.
penalize puts a client in the penalty box now (penalty: in the configuration);
reset -limit penalty takes it out. Every reset and penalize is logged by the
server with the caller's name.
token says whom the JSON Web Token in FILE ("-": standard input) names and on
which plan, or why it names no one, as the server verifies it now (identity.jwt).
`

// runKeys calls the admin listener's key API: inspect, reset or list the
// most refused subjects.
func runKeys(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("keys", keysUsage, stderr)
	admin := fs.String("admin", "", "the admin listener's URL, https:// when it has admin.tls (default: $SLUICE_ADMIN, else "+defaultAdminURL+")")
	// The token of $SLUICE_TOKEN is read after parsing: a flag's default
	// is printed in the usage, and a secret never is.
	token := fs.String("token", "", "a caller token with the admin scope (default: $SLUICE_TOKEN); given here, any user of the host reads it with ps: prefer $SLUICE_TOKEN or -token-file")
	tokenFile := fs.String("token-file", "", "a file holding the caller token, instead of -token (a pipe too: -token-file <(pass show sluice/admin))")
	var tlsFlags adminTLS
	fs.StringVar(&tlsFlags.caFile, "cacert", "", "https: a PEM bundle of the CAs that sign the admin listener's certificate (default: the system's roots)")
	fs.StringVar(&tlsFlags.certFile, "cert", "", "https with mutual TLS: the client certificate of a caller with the admin scope")
	fs.StringVar(&tlsFlags.keyFile, "key", "", "https with mutual TLS: the client certificate's key")
	plan := fs.String("plan", "", "inspect, reset: the subject's plan, when not its own")
	limit := fs.String("limit", "", "reset: the one limit to reset (default: every limit)")
	n := fs.Int("n", 10, "top: how many subjects, 1 to 512")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	// Each of these flags, left out, widens what the command does: -limit
	// resets every limit (the penalty box's included), -plan reads the
	// subject's own plan, -token-file sends $SLUICE_TOKEN's token, -cacert
	// trusts every CA of the system's.
	if err := givenEmpty(fs, "limit", "plan", "token-file", "cacert"); err != nil {
		return err
	}
	if isSet(fs, "token") && *tokenFile != "" {
		return usageErrorf("-token and -token-file: give one of them")
	}
	if !isSet(fs, "token") {
		*token = strings.TrimSpace(os.Getenv("SLUICE_TOKEN"))
	}
	if !isSet(fs, "admin") {
		*admin = cmp.Or(strings.TrimSpace(os.Getenv("SLUICE_ADMIN")), defaultAdminURL)
	}
	if *tokenFile != "" {
		if _, err := os.Lstat(*tokenFile); err != nil && strings.HasPrefix(*tokenFile, "sluice_") {
			return usageErrorf("-token-file: give the name of a file holding the token, not the token itself (or set $SLUICE_TOKEN)")
		}
		t, err := readSecretOnce(ctx, *tokenFile)
		if err != nil {
			return fmt.Errorf("token: %w", err)
		}
		*token = t
	}
	if u, err := url.Parse(*admin); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usageErrorf("-admin %q: want the admin listener's URL, e.g. http://127.0.0.1:9090 (https:// with admin.tls)", redact.URL(*admin))
	}
	*admin = strings.TrimSuffix(*admin, "/")
	if u, _ := url.Parse(*admin); *token != "" && inClear(u) {
		fmt.Fprintf(stderr, "sluice keys: warning: the caller token goes to %s in clear (http://), which anyone on the way reads; give the admin listener admin.tls and call it with -admin https://…\n", u.Host)
	}
	client, err := tlsFlags.client()
	if err != nil {
		return err
	}
	rest := fs.Args()
	want := map[string]int{"top": 1, "inspect": 2, "reset": 2, "penalize": 2, "token": 2}
	if err := flagAfterArguments("keys", rest); err != nil {
		return err
	}
	if len(rest) == 0 || want[rest[0]] != len(rest) {
		fs.Usage()
		return usageErrorf("want top, inspect SUBJECT, reset SUBJECT, penalize SUBJECT or token FILE")
	}
	// The admin listener refuses a parameter its endpoint does not take.
	if *plan != "" && rest[0] != "inspect" && rest[0] != "reset" {
		return usageErrorf("-plan is for inspect and reset, not %s", rest[0])
	}
	if *limit != "" && rest[0] != "reset" {
		return usageErrorf("-limit is for reset, not %s", rest[0])
	}
	if isSet(fs, "n") && rest[0] != "top" {
		return usageErrorf("-n is for top, not %s", rest[0])
	}
	if *n < 1 || *n > maxTop {
		return usageErrorf("-n %d: top lists 1 to %d subjects", *n, maxTop)
	}
	q := url.Values{}
	if *plan != "" {
		q.Set("plan", *plan)
	}
	method, path := http.MethodGet, "/v1/keys"
	var send []byte
	switch rest[0] {
	case "token":
		jwt, err := readToken(ctx, rest[1])
		if err != nil {
			return err
		}
		method, path = http.MethodPost, "/v1/tokens"
		send, _ = json.Marshal(map[string]string{"token": jwt})
	case "top":
		q.Set("top", strconv.Itoa(*n))
	case "inspect":
		path += "/" + url.PathEscape(rest[1])
	case "reset":
		method, path = http.MethodDelete, path+"/"+url.PathEscape(rest[1])
		if *limit != "" {
			q.Set("limit", *limit)
		}
	case "penalize":
		method, path = http.MethodPost, path+"/"+url.PathEscape(rest[1])
		q.Set("action", "penalize")
	}
	u := *admin + path + "?" + q.Encode()
	body, err := callAdmin(ctx, client, method, u, *token, send)
	var refused *adminError
	if errors.As(err, &refused) && refused.status == http.StatusUnauthorized && *token == "" {
		return fmt.Errorf("%w; no token was sent (-token, -token-file or $SLUICE_TOKEN)", err)
	}
	var dial *net.OpError
	if errors.As(err, &dial) && dial.Op == "dial" {
		return fmt.Errorf("%w (is sluice serve running there? -admin is the URL of its admin.listen)", err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: no answer within %v (is -admin the URL of sluice serve's admin.listen?)", err, adminTimeout)
	}
	var unknownCA x509.UnknownAuthorityError
	if errors.As(err, &unknownCA) {
		return fmt.Errorf("%w (-cacert names the CA that signs the admin listener's certificate)", err)
	}
	if err != nil {
		return withSchemeHint(err, *admin)
	}
	if err := printKeys(stdout, rest[0], body); err != nil {
		return fmt.Errorf("%s %s: not an answer of sluice's admin listener (is -admin its URL?)", method, redact.URL(u))
	}
	return nil
}

// maxTop is the most subjects the admin listener's top lists.
const maxTop = 512

// givenEmpty returns a usageError when the command line gives one of the
// flags names an empty value, as a script's -limit "$LIMIT" does when its
// variable is unset or misspelt: an empty value is refused, not read as
// the flag left out, which would widen the command's action.
func givenEmpty(fs *flag.FlagSet, names ...string) error {
	for _, name := range names {
		if isSet(fs, name) && fs.Lookup(name).Value.String() == "" {
			return usageErrorf("-%s \"\": an empty value; give one, or leave -%s out (%s)", name, name, fs.Lookup(name).Usage)
		}
	}
	return nil
}

// isSet reports whether the command line set the flag name.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// readToken reads a JSON Web Token from the file at path, a pipe too
// (readSecretOnce), or from standard input for "-", given up when ctx
// ends: at most 16 KiB, spaces around it left out. A path that is no file
// and looks like a token itself is a usageError that does not hold it.
func readToken(ctx context.Context, path string) (string, error) {
	var b []byte
	var err error
	if _, statErr := os.Lstat(path); statErr != nil && path != "-" && strings.HasPrefix(path, "eyJ") && strings.Count(path, ".") == 2 {
		return "", usageErrorf(`token: give a FILE holding the token, or "-" and the token on standard input (printf %%s "$JWT" | sluice keys token -), not the token itself, which other users of the host read with ps`)
	}
	if path == "-" {
		b, err = readStdin(ctx, 16<<10+1)
	} else {
		var s string
		s, err = readSecretOnce(ctx, path)
		b = []byte(s)
	}
	if err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	if len(b) > 16<<10 {
		return "", errors.New("token: more than 16 KiB")
	}
	return strings.TrimSpace(string(b)), nil
}

// readStdin reads standard input to its end, at most limit bytes, or
// returns ctx's error when ctx ends first (the read then goes on, its
// result dropped: standard input cannot be interrupted).
func readStdin(ctx context.Context, limit int64) ([]byte, error) {
	in := os.Stdin
	return untilDone(ctx, func() ([]byte, error) { return io.ReadAll(io.LimitReader(in, limit)) })
}

// adminTimeout bounds one call of the admin listener, its answer read.
const adminTimeout = 10 * time.Second

// callAdmin sends one request, with body when not nil, to the admin
// listener and returns the body of a 200, or an error: an *adminError with
// the problem's detail for an answer of another status, or where a
// redirect points. No error holds the password of u.
func callAdmin(ctx context.Context, client *http.Client, method, u, token string, body []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, adminTimeout)
	defer cancel()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, r)
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, err
	}
	if loc := resp.Header.Get("Location"); resp.StatusCode/100 == 3 && loc != "" {
		return nil, &adminError{status: resp.StatusCode, text: fmt.Sprintf("%s %s: %s to %s: not the admin listener, which never redirects (is -admin its URL? https:// with admin.tls)",
			method, redact.URL(u), resp.Status, redact.URL(loc))}
	}
	if resp.StatusCode != http.StatusOK {
		var p struct{ Detail string }
		json.Unmarshal(answer, &p)
		if p.Detail == "" { // not a problem of sluice's: the answer's first line
			p.Detail, _, _ = strings.Cut(strings.TrimSpace(string(answer[:min(len(answer), 200)])), "\n")
		}
		text := fmt.Sprintf("%s %s: %s", method, redact.URL(u), resp.Status)
		if p.Detail != "" {
			text += ": " + p.Detail
		}
		return nil, &adminError{status: resp.StatusCode, text: text}
	}
	return answer, nil
}

// An adminError is an answer of the admin listener other than 200.
type adminError struct {
	status int    // the answer's status code
	text   string // "METHOD URL: status: the problem's detail"
}

func (e *adminError) Error() string { return e.text }

// adminTLS is how a command reaches an admin listener over TLS.
type adminTLS struct{ caFile, certFile, keyFile string }

// client returns an HTTP client that verifies the admin listener with
// caFile's CAs (the system's when empty) and presents the client
// certificate, if any, and that follows no redirect (the admin listener
// never answers one); a usageError when only one of certFile and keyFile
// is set.
func (a adminTLS) client() (*http.Client, error) {
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c, err := a.config()
	if err != nil {
		return nil, err
	}
	if c == nil {
		return &http.Client{CheckRedirect: noRedirect}, nil
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = c
	return &http.Client{Transport: t, CheckRedirect: noRedirect}, nil
}

// config returns the TLS configuration of the flags: nil when none is set
// (the system's roots, no client certificate); a usageError when only one
// of certFile and keyFile is.
func (a adminTLS) config() (*tls.Config, error) {
	if a.caFile == "" && a.certFile == "" && a.keyFile == "" {
		return nil, nil
	}
	if (a.certFile == "") != (a.keyFile == "") {
		return nil, usageErrorf("-cert and -key go together")
	}
	return config.ClientTLS{Enabled: true, CAFile: a.caFile, CertFile: a.certFile, KeyFile: a.keyFile}.Load()
}

// defaultAdminURL is the admin listener sluice serve binds by default
// (admin.listen); deploy/sluice.yaml's host layout moves it to 9091, off
// Prometheus's default port, and its operators set $SLUICE_ADMIN.
const defaultAdminURL = "http://127.0.0.1:9090"

// printKeys prints the answer of a keys command as a table.
func printKeys(w io.Writer, cmd string, body []byte) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	defer tw.Flush()
	switch cmd {
	case "top":
		var top []struct {
			Subject, Client, Plan  string
			Refused, RefusedAtMost int64
		}
		if err := json.Unmarshal(body, &top); err != nil {
			return err
		}
		fmt.Fprintln(tw, "SUBJECT\tCLIENT\tPLAN\tREFUSED")
		for _, e := range top {
			refused := strconv.FormatInt(e.Refused, 10)
			if e.RefusedAtMost > e.Refused {
				refused += " (" + strconv.FormatInt(e.RefusedAtMost, 10) + " at most)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", shown(e.Subject), shown(e.Client), shown(e.Plan), refused)
		}
	case "inspect":
		var st struct {
			Subject, Exempt string
			Limits          []struct {
				Name, Algorithm, Window string
				Quantity, Burst         int64
				Remaining, Used         int64
				ResetAfterMs            int64
			}
		}
		if err := json.Unmarshal(body, &st); err != nil {
			return err
		}
		if st.Exempt != "" {
			fmt.Fprintf(tw, "%s is exempt (by %s): no request of it spends these\n", shown(st.Subject), shown(st.Exempt))
		}
		fmt.Fprintln(tw, "LIMIT\tALGORITHM\tQUANTITY\tWINDOW\tUSED\tREMAINING\tFULL IN")
		for _, l := range st.Limits {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t%d\t%s\n", shown(l.Name), shown(l.Algorithm), l.Quantity, shown(l.Window), l.Used, l.Remaining,
				time.Duration(l.ResetAfterMs)*time.Millisecond)
		}
	case "reset":
		var r struct {
			Subject string
			Limits  []string
			Forgot  int
		}
		if err := json.Unmarshal(body, &r); err != nil {
			return err
		}
		fmt.Fprintf(tw, "reset %s: [%s] (%d states forgotten)\n", shown(r.Subject), shownAll(r.Limits, " "), r.Forgot)
	case "penalize":
		var r struct {
			Subject        string
			PenalizedForMs int64
		}
		if err := json.Unmarshal(body, &r); err != nil {
			return err
		}
		fmt.Fprintf(tw, "%s is in the penalty box for %s\n", shown(r.Subject), time.Duration(r.PenalizedForMs)*time.Millisecond)
	case "token":
		var a struct {
			Verified                                 bool
			Result, Detail, Subject, Plan, PlanClaim string
			PlanNames                                []string
			ExpiresAt                                *time.Time
			Claims                                   map[string]string
		}
		if err := json.Unmarshal(body, &a); err != nil {
			return err
		}
		if !a.Verified {
			fmt.Fprintf(tw, "not verified (%s): %s\nthe client is limited by its address\n", shown(a.Result), shown(a.Detail))
			return nil
		}
		fmt.Fprintf(tw, "SUBJECT\t%s\nPLAN\t%s", shown(a.Subject), shown(a.Plan))
		if a.PlanClaim != "" && a.PlanClaim != a.Plan {
			fmt.Fprintf(tw, " (the token names %q, not a plan)", a.PlanClaim)
		}
		if len(a.PlanNames) > 0 {
			fmt.Fprintf(tw, " (of the token's list %s)", shownAll(a.PlanNames, ", "))
		}
		fmt.Fprintln(tw)
		if a.ExpiresAt != nil {
			fmt.Fprintf(tw, "EXPIRES\t%s\n", a.ExpiresAt.Format(time.RFC3339))
		}
		names := slices.Sorted(maps.Keys(a.Claims))
		for _, k := range names {
			fmt.Fprintf(tw, "CLAIM\t%s\t%s\n", shown(k), shown(a.Claims[k]))
		}
	}
	return nil
}

// shown is s as the keys command prints it: as it is when every character
// is printable (letters of any script, marks, digits, punctuation, symbols,
// the ASCII space), else quoted as a Go string. What it prints came from a
// client (a header, a query value, a token's claim): a control character
// would reach the operator's terminal (an escape sequence, a newline that
// forges a row, a tab that shifts the columns), a format character such
// as a right-to-left override would turn a name around.
func shown(s string) string {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// shownAll is each of names shown, joined by sep.
func shownAll(names []string, sep string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = shown(n)
	}
	return strings.Join(out, sep)
}

// inClear reports whether a request to u crosses a network in clear: plain
// http to a host other than this one (a loopback address, or localhost).
func inClear(u *url.URL) bool {
	if u.Scheme != "http" {
		return false
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "localhost" {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
}
