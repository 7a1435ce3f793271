package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/sluice-dev/sluice/internal/redact"
)

// defaultHealthURL is the readiness endpoint of a server whose admin
// listener is the container image's (:9090, plain HTTP).
const defaultHealthURL = "http://127.0.0.1:9090/readyz"

// runHealthcheck asks a running sluice whether it is ready, for a
// container's HEALTHCHECK or a compose file's healthcheck, where the image
// holds no other program that speaks HTTP: one GET of the URL (default
// defaultHealthURL), which succeeds on a 2xx answer within -timeout. A
// redirect is not followed and fails, as does any other status; the answer's
// first line is printed either way.
func runHealthcheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	timeout := fs.Duration("timeout", 3*time.Second, "the longest the check waits for an answer")
	var tlsFlags adminTLS
	fs.StringVar(&tlsFlags.caFile, "cacert", "", "PEM file of the CA that signed an https URL's certificate (default: the system's)")
	fs.StringVar(&tlsFlags.certFile, "cert", "", "https with mutual TLS (admin.tls with a client_ca_file): a client certificate the listener's CA signed")
	fs.StringVar(&tlsFlags.keyFile, "key", "", "https with mutual TLS: the client certificate's key")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: sluice healthcheck [-timeout 3s] [-cacert file] [-cert file -key file] [URL]\n\n"+
			"Exits 0 when URL (default %s) answers 2xx, 1 otherwise.\n"+
			"/readyz answers 503 while the server shuts down, or while its store is down under on_store_error deny.\n\n", defaultHealthURL)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return usageErrorf("unexpected argument %q", fs.Arg(1))
	}
	if *timeout <= 0 {
		return usageErrorf("-timeout %v: want a positive duration", *timeout)
	}
	target := defaultHealthURL
	if fs.NArg() == 1 {
		target = fs.Arg(0)
	}
	shown := redact.URL(target) // what messages name: never a password in it
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usageErrorf("%q: want an http or https URL", shown)
	}
	transport := &http.Transport{DisableKeepAlives: true} // no proxy from the environment
	if tlsFlags != (adminTLS{}) {
		if u.Scheme != "https" {
			flag := "-cacert is"
			if tlsFlags.caFile == "" {
				flag = "-cert and -key are"
			}
			return usageErrorf("%s for an https URL, not %q", flag, shown)
		}
		c, err := tlsFlags.config()
		if err != nil {
			return err
		}
		transport.TLSClientConfig = c
	}
	client := &http.Client{
		Transport:     transport,
		Timeout:       *timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return fmt.Errorf("%s: %w", shown, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is named once, below
		}
		return fmt.Errorf("%s: %w", shown, err)
	}
	defer resp.Body.Close()
	first := firstLine(io.LimitReader(resp.Body, 1024))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s: %s: %s", shown, resp.Status, first)
	}
	fmt.Fprintf(stdout, "%s: %s: %s\n", shown, resp.Status, first)
	return nil
}

// firstLine returns the first line of what r holds, without its line end.
func firstLine(r io.Reader) string {
	b, _ := io.ReadAll(r)
	for i, c := range b {
		if c == '\n' || c == '\r' {
			return string(b[:i])
		}
	}
	return string(b)
}
