package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestKeysRefusesAnEmptyFlagThatLeftOutWidensIt: a flag given an empty
// value (a script's -limit "$LIMIT" whose variable is unset or misspelt)
// is a usage error (exit 2) that sends nothing, not the flag left out:
// an empty -limit would reset every limit of the subject, the penalty
// box's included, an empty -plan read the subject's own plan, an empty
// -token-file send $SLUICE_TOKEN's token, an empty -cacert trust every CA
// of the system's. The admin listener refuses ?limit= likewise.
func TestKeysRefusesAnEmptyFlagThatLeftOutWidensIt(t *testing.T) {
	var sent []string
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent = append(sent, r.Method+" "+r.URL.RequestURI())
		w.Write([]byte(`{"subject":"ext:a","limits":["per-minute","penalty","penalty-refusals"],"forgot":3}`))
	}))
	t.Cleanup(admin.Close)
	for _, flag := range []string{"-limit", "-plan", "-token-file", "-cacert"} {
		sent = nil
		var out, errOut bytes.Buffer
		code := run(context.Background(), []string{"keys", "-admin", admin.URL, "-token", "sluice_t", flag, "", "reset", "ext:a"}, &out, &errOut)
		if code != 2 || len(sent) != 0 || !strings.Contains(errOut.String(), flag+` ""`) {
			t.Errorf("keys %s \"\" reset ext:a: exit %d, sent %q, stderr %q; want 2, nothing sent and the flag named", flag, code, sent, errOut.String())
		}
	}
	sent = nil
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"keys", "-admin", admin.URL, "-token", "sluice_t", "-limit", "penalty", "reset", "ext:a"}, &out, &errOut); code != 0 ||
		len(sent) != 1 || sent[0] != "DELETE /v1/keys/ext:a?limit=penalty" {
		t.Errorf("keys -limit penalty reset ext:a: exit %d, sent %q, stderr %q; want the one limit reset", code, sent, errOut.String())
	}
}
