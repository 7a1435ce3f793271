package server_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
)

// examples/rules.yaml's logins rule, through the reverse proxy: sign-in
// attempts are counted per username of the posted form, whatever address
// they come from, and the upstream receives every body whole, a long one
// too.
func TestLoginsCountedPerUsernameThroughTheProxy(t *testing.T) {
	rules, err := os.ReadFile("../examples/rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%d:%s", r.ContentLength, b)
	}))
	defer echo.Close()
	srv, _ := loadServer(t, t.TempDir(), "upstream: "+echo.URL+"\n"+string(rules)) // its identity trusts 127.0.0.1: X-Forwarded-For stands for each attempt's address
	public := httptest.NewServer(srv.PublicHandler())
	defer public.Close()
	login := func(from, body string) (int, string) {
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
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	var codes []int
	for i := range 6 {
		body := fmt.Sprintf("username=Mallory&password=try%d", i)
		code, got := login(fmt.Sprintf("198.51.100.%d", i+1), body)
		codes = append(codes, code)
		if code == 200 && got != fmt.Sprintf("%d:%s", len(body), body) {
			t.Errorf("the upstream received %q, want the whole body %q", got, body)
		}
	}
	if code, _ := login("198.51.100.99", "username=trent&password=x"); code != 200 {
		codes = append(codes, code)
	}
	if want := []int{200, 200, 200, 200, 200, 429}; !slices.Equal(codes, want) {
		t.Errorf("mallory from six addresses, then trent: %v, want %v", codes, want)
	}
	long := "username=trent&note=" + strings.Repeat("n", 100<<10)
	if code, got := login("198.51.100.100", long); code != 200 || got != fmt.Sprintf("%d:%s", len(long), long) {
		t.Errorf("a body past the 64 KiB read for the key: %d, the upstream received %d bytes of %d", code, len(got), len(long))
	}
}
