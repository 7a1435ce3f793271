package main

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A subject is whatever a client sent (a query value, a header, a JSON
// field, a token's claim), so the keys command prints one holding control
// or format characters quoted: an escape sequence never reaches the
// operator's terminal, a newline or tab never forges a row, a right-to-left
// override never turns a name around. Printable names, spaces and non-ASCII
// letters included, are printed as they are.
func TestKeysQuotesWhatATerminalWouldObey(t *testing.T) {
	const answer = `[{"Subject":"ext:mallory\u001b[2J\u001b]0;pwned\u0007","Client":"203.0.113.9","Plan":"free","Refused":7},` +
		`{"Subject":"ext:forged\n\t\tpro\t999","Client":"x","Plan":"free","Refused":1},` +
		`{"Subject":"ext:admin\u202egpj.exe","Client":"x","Plan":"free","Refused":1},` +
		`{"Subject":"ext:tenant/ünïcode key","Client":"x","Plan":"free","Refused":1}]`
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(answer))
	}))
	t.Cleanup(admin.Close)
	var out strings.Builder
	if err := runKeys(context.Background(), []string{"-admin", admin.URL, "-token", "sluice_t", "top"}, &out, &strings.Builder{}); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, bad := range []string{"\x1b", "\x07", "\u202e"} {
		if strings.Contains(got, bad) {
			t.Errorf("the table holds %q:\n%s", bad, got)
		}
	}
	if lines := strings.Count(got, "\n"); lines != 5 {
		t.Errorf("%d lines, want a heading and 4 rows:\n%s", lines, got)
	}
	for _, want := range []string{`"ext:mallory\x1b[2J\x1b]0;pwned\a"`, `"ext:forged\n\t\tpro\t999"`, `"ext:admin\u202egpj.exe"`, "ext:tenant/ünïcode key  "} {
		if !strings.Contains(got, want) {
			t.Errorf("the table lacks %s:\n%s", want, got)
		}
	}
}

// The admin listener refuses a parameter its endpoint does not take (a 400
// naming it), so the command refuses -plan and -limit where they mean
// nothing, before it asks: a usage error (exit 2) that says which commands
// take them.
func TestKeysRefusesFlagsItsCommandDoesNotTake(t *testing.T) {
	asked := false
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { asked = true; w.Write([]byte("[]")) }))
	t.Cleanup(admin.Close)
	for _, args := range [][]string{
		{"-plan", "pro", "top"},
		{"-plan", "pro", "penalize", "ext:a"},
		{"-limit", "per-minute", "inspect", "ext:a"},
		{"-limit", "per-minute", "top"},
	} {
		var errOut strings.Builder
		err := runKeys(context.Background(), append([]string{"-admin", admin.URL, "-token", "sluice_t"}, args...), &strings.Builder{}, &errOut)
		var usage usageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), "is for") {
			t.Errorf("keys %q: %v; want a usage error saying which commands take the flag", args, err)
		}
	}
	if asked {
		t.Error("the command asked the admin listener with a flag its endpoint refuses")
	}
}

// Without -admin, sluice keys asks the listener $SLUICE_ADMIN names (the
// host layout's 127.0.0.1:9091, off Prometheus's port), else
// 127.0.0.1:9090; -admin outranks it.
func TestKeysAsksTheAdminListenerOfTheEnvironment(t *testing.T) {
	asked := make(chan string, 2)
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { asked <- r.URL.Path; w.Write([]byte("[]")) }))
	t.Cleanup(admin.Close)
	t.Setenv("SLUICE_ADMIN", admin.URL)
	if err := runKeys(context.Background(), []string{"-token", "sluice_t", "top"}, &strings.Builder{}, &strings.Builder{}); err != nil {
		t.Fatalf("with $SLUICE_ADMIN: %v", err)
	}
	if got := <-asked; got != "/v1/keys" {
		t.Errorf("asked %q, want /v1/keys", got)
	}
	t.Setenv("SLUICE_ADMIN", "http://127.0.0.1:1") // nothing listens there
	if err := runKeys(context.Background(), []string{"-admin", admin.URL, "-token", "sluice_t", "top"}, &strings.Builder{}, &strings.Builder{}); err != nil {
		t.Errorf("-admin beside $SLUICE_ADMIN: %v", err)
	}
}
