package server_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

// examples/rules.yaml's logins rule stops credential stuffing spread over
// many addresses: a limit per username. A sign-in attempt whose form body
// is padded past the 64 KiB sluice reads for the key (one junk field) may
// name any username to the upstream (Go's r.FormValue, Rails and PHP read
// the whole form), so every such attempt of the rule is counted together,
// as an ambiguous field is, never by its address: padded attempts at one
// account from eight addresses get the rule's 5 a minute between them.
func TestAPaddedSignInBodyIsCountedTogetherNotByAddress(t *testing.T) {
	rules, err := os.ReadFile("../examples/rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var signedIn atomic.Int32 // attempts at mallory the upstream acted on
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.FormValue("username") == "mallory" { // the upstream reads the whole form
			signedIn.Add(1)
		}
		fmt.Fprint(w, "ok")
	}))
	defer up.Close()
	srv, _ := loadServer(t, t.TempDir(), "upstream: "+up.URL+"\n"+string(rules)) // trusts 127.0.0.1: X-Forwarded-For is each attempt's address
	public := httptest.NewServer(srv.PublicHandler())
	defer public.Close()
	login := func(from, body string) int {
		r, err := http.NewRequest("POST", public.URL+"/v1/login", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Header.Set("X-Forwarded-For", from)
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}
	pad := "&x=" + strings.Repeat("a", 65<<10)
	var codes []int
	for i := range 8 {
		codes = append(codes, login(fmt.Sprintf("198.51.100.%d", i+1), fmt.Sprintf("username=mallory&password=guess%d", i)+pad))
	}
	want := []int{200, 200, 200, 200, 200, 429, 429, 429} // logins.per-minute: 5 attempts per username
	if !slices.Equal(codes, want) {
		t.Errorf("8 padded sign-in attempts at mallory from 8 addresses: %v, want %v; the upstream signed in %q %d times",
			codes, want, "mallory", signedIn.Load())
	}
}

// A sign-in form body of more than 10,000 fields within the 64 KiB (here
// 40 KB), which Go's url.ParseQuery refuses whole and PHP reads the first
// 1,000 of, is read whole for the key: its username counts, so attempts at
// one account from eight addresses get the account's 5 a minute.
func TestASignInBodyOfManyFieldsIsCountedByItsUsername(t *testing.T) {
	rules, err := os.ReadFile("../examples/rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // a PHP upstream reads username=mallory, the first field
		fmt.Fprint(w, "ok")
	}))
	defer up.Close()
	srv, _ := loadServer(t, t.TempDir(), "upstream: "+up.URL+"\n"+string(rules))
	public := httptest.NewServer(srv.PublicHandler())
	defer public.Close()
	var codes []int
	for i := range 8 {
		body := fmt.Sprintf("username=mallory&password=guess%d", i) + strings.Repeat("&a=1", 10000)
		r, err := http.NewRequest("POST", public.URL+"/v1/login", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Header.Set("X-Forwarded-For", fmt.Sprintf("198.51.100.%d", i+1))
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		codes = append(codes, resp.StatusCode)
	}
	if want := []int{200, 200, 200, 200, 200, 429, 429, 429}; !slices.Equal(codes, want) {
		t.Errorf("8 sign-in attempts at mallory of 10,002 fields (40 KB) from 8 addresses: %v, want %v", codes, want)
	}
}
