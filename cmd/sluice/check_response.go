package main

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/internal/redact"
)

// printResponse prints what refused and limited clients are told: header
// modes, the refusal's body and statuses, hidden limits and how
// Retry-After is spread, and which browser origins may read it.
func printResponse(w io.Writer, cfg *config.Config) {
	r := cfg.Response
	modes := r.Headers
	if len(modes) == 0 {
		modes = []string{httplimit.ModeIETF}
	}
	parts := []string{"headers " + strings.Join(modes, ", ")}
	body := "RFC 9457 problem"
	switch r.Template {
	case "":
	case httplimit.TemplateErrorCode:
		body = "error-code JSON"
	default:
		body = "JSON template"
	}
	statuses := "429"
	if r.GlobalStatus == http.StatusServiceUnavailable {
		statuses += ", 503 by global limits alone"
	}
	if r.DenyStatus != 0 && r.DenyStatus != http.StatusTooManyRequests {
		statuses += fmt.Sprintf(", %d on forward-auth", r.DenyStatus)
	}
	parts = append(parts, fmt.Sprintf("refusals %s (%s)", body, statuses))
	if len(r.Hide) > 0 {
		parts = append(parts, "hidden "+strings.Join(r.Hide, ", "))
	}
	if r.RetryJitter > 0 {
		parts = append(parts, fmt.Sprintf("Retry-After spread up to %s later (a tenth of a limit's window at most)", httplimit.FormatWindow(r.RetryJitter)))
	} else {
		parts = append(parts, "Retry-After exact")
	}
	if c := r.CORS; len(c.Origins) > 0 {
		cors := "readable by pages of " + strings.Join(c.Origins, ", ")
		if c.Credentials {
			cors += " (with credentials)"
		}
		parts = append(parts, cors)
	}
	fmt.Fprintf(w, "RESPONSE  %s\n", strings.Join(parts, "; "))
}

// printNotify prints the NOTIFY line: where crossings of which shares of
// which quotas are posted, and whether they are signed (never the secret).
func printNotify(w io.Writer, cfg *config.Config) {
	n := cfg.Notify
	if n.URL == "" {
		return
	}
	at := make([]string, len(n.At))
	for i, v := range n.At {
		at[i] = fmt.Sprintf("%d%%", v)
	}
	signed := "unsigned"
	if n.Secret != nil {
		signed = "signed with the secret of " + n.SecretFile
	}
	fmt.Fprintf(w, "NOTIFY  %s at %s of %s, once per window; %s\n", redact.URL(n.URL), strings.Join(at, ", "), strings.Join(n.Limits, ", "), signed)
}

// printSettle prints the SETTLE line when the decision API's settlement
// ids are signed: any instance with the same secret settles them.
func printSettle(w io.Writer, cfg *config.Config) {
	if cfg.Settle.Secret == nil {
		return
	}
	fmt.Fprintf(w, "SETTLE  ids signed with the secret of %s: any instance with the same secret and limits settles them, once\n", cfg.Settle.SecretFile)
}

// printLog says what the server logs of the requests it refuses.
func printLog(w io.Writer, cfg *config.Config) {
	if n := cfg.Log.RefusalsPerSecond; n > 0 {
		fmt.Fprintf(w, "LOG  refused requests, at most %d lines a second, then one line counting the rest\n", n)
		return
	}
	fmt.Fprintln(w, "LOG  refused requests: none (log.refusals_per_second 0)")
}
