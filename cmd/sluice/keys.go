package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/sluice-dev/sluice/config"
)

// runKeys calls the admin listener's key API: inspect, reset or list the
// most refused subjects.
func runKeys(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("keys", flag.ContinueOnError)
	fs.SetOutput(stderr)
	admin := fs.String("admin", "http://127.0.0.1:9090", "the admin listener's URL (https:// when it has admin.tls)")
	token := fs.String("token", os.Getenv("SLUICE_TOKEN"), "a caller token with the admin scope (default $SLUICE_TOKEN)")
	tokenFile := fs.String("token-file", "", "a file holding the caller token, instead of -token")
	var tlsFlags adminTLS
	fs.StringVar(&tlsFlags.caFile, "cacert", "", "https: a PEM bundle of the CAs that sign the admin listener's certificate (default: the system's roots)")
	fs.StringVar(&tlsFlags.certFile, "cert", "", "https with mutual TLS: the client certificate of a caller with the admin scope")
	fs.StringVar(&tlsFlags.keyFile, "key", "", "https with mutual TLS: the client certificate's key")
	plan := fs.String("plan", "", "inspect, reset: the subject's plan, when not its own")
	limit := fs.String("limit", "", "reset: the one limit to reset (default: every limit)")
	n := fs.Int("n", 10, "top: how many subjects")
	fs.Usage = func() {
		fmt.Fprintln(stderr, `usage: sluice keys [flags] top | inspect SUBJECT | reset SUBJECT | penalize SUBJECT

Subjects are "key:<sha256 hex>", "name:<listed key's name>", "user:<id>",
"ip:<prefix>", "rule:<rule>/<key>" or "*".
penalize puts a client in the penalty box now (penalty: in the configuration);
reset -limit penalty takes it out. Every reset and penalize is logged by the
server with the caller's name.`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *tokenFile != "" {
		t, err := config.ReadSecret(*tokenFile)
		if err != nil {
			return fmt.Errorf("token: %w", err)
		}
		*token = t
	}
	client, err := tlsFlags.client()
	if err != nil {
		return err
	}
	rest := fs.Args()
	want := map[string]int{"top": 1, "inspect": 2, "reset": 2, "penalize": 2}
	if len(rest) == 0 || want[rest[0]] != len(rest) {
		fs.Usage()
		return errors.New("want top, inspect SUBJECT, reset SUBJECT or penalize SUBJECT")
	}
	q := url.Values{}
	if *plan != "" {
		q.Set("plan", *plan)
	}
	method, path := http.MethodGet, "/v1/keys"
	switch rest[0] {
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
	body, err := callAdmin(ctx, client, method, *admin+path+"?"+q.Encode(), *token)
	if err != nil {
		return err
	}
	return printKeys(stdout, rest[0], body)
}

// callAdmin sends one request to the admin listener and returns the body
// of a 200, or an error with the problem's detail.
func callAdmin(ctx context.Context, client *http.Client, method, u, token string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
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
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		var p struct{ Detail string }
		json.Unmarshal(body, &p)
		return nil, fmt.Errorf("%s %s: %s: %s", method, u, resp.Status, p.Detail)
	}
	return body, nil
}

// adminTLS is how a command reaches an admin listener over TLS.
type adminTLS struct{ caFile, certFile, keyFile string }

// client returns an HTTP client that verifies the admin listener with
// caFile's CAs (the system's when empty) and presents the client
// certificate, if any.
func (a adminTLS) client() (*http.Client, error) {
	if a.caFile == "" && a.certFile == "" && a.keyFile == "" {
		return http.DefaultClient, nil
	}
	if (a.certFile == "") != (a.keyFile == "") {
		return nil, errors.New("-cert and -key go together")
	}
	c, err := config.ClientTLS{Enabled: true, CAFile: a.caFile, CertFile: a.certFile, KeyFile: a.keyFile}.Load()
	if err != nil {
		return nil, err
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = c
	return &http.Client{Transport: t}, nil
}

// printKeys prints the answer of a keys command as a table.
func printKeys(w io.Writer, cmd string, body []byte) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	defer tw.Flush()
	switch cmd {
	case "top":
		var top []struct {
			Subject, Client, Plan string
			Refused               int64
		}
		if err := json.Unmarshal(body, &top); err != nil {
			return err
		}
		fmt.Fprintln(tw, "SUBJECT\tCLIENT\tPLAN\tREFUSED")
		for _, e := range top {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\n", e.Subject, e.Client, e.Plan, e.Refused)
		}
	case "inspect":
		var st struct {
			Limits []struct {
				Name, Algorithm, Window string
				Quantity, Burst         int64
				Remaining, Used         int64
				ResetAfterMs            int64
			}
		}
		if err := json.Unmarshal(body, &st); err != nil {
			return err
		}
		fmt.Fprintln(tw, "LIMIT\tALGORITHM\tQUANTITY\tWINDOW\tUSED\tREMAINING\tFULL IN")
		for _, l := range st.Limits {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t%d\t%s\n", l.Name, l.Algorithm, l.Quantity, l.Window, l.Used, l.Remaining,
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
		fmt.Fprintf(tw, "reset %s: %v (%d states forgotten)\n", r.Subject, r.Limits, r.Forgot)
	case "penalize":
		var r struct {
			Subject        string
			PenalizedForMs int64
		}
		if err := json.Unmarshal(body, &r); err != nil {
			return err
		}
		fmt.Fprintf(tw, "%s is in the penalty box for %s\n", r.Subject, time.Duration(r.PenalizedForMs)*time.Millisecond)
	}
	return nil
}
