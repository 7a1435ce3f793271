package config_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

func TestCORSOrigins(t *testing.T) {
	base := "plans: {p: {limits: [{name: m, algorithm: gcra, quantity: 1, window: 1s}]}}\nresponse:\n  cors:\n"
	c, err := config.Parse("t.yaml", []byte(base+`    origins: ["https://app.example.com", "http://localhost:5173", "https://*.example.net", "http://[::1]:8080"]`+"\n    credentials: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	cors := c.Response.CORS
	for origin, want := range map[string]string{
		"https://app.example.com":        "https://app.example.com",
		"https://APP.example.com":        "https://APP.example.com",
		"http://localhost:5173":          "http://localhost:5173",
		"https://shop.example.net":       "https://shop.example.net",
		"https://a.b.example.net":        "https://a.b.example.net",
		"https://example.net":            "",
		"http://shop.example.net":        "",
		"https://evilexample.net":        "",
		"https://app.example.com.evil.x": "",
		"https://x.example.net/.a":       "",
		"https://evil.org#.example.net":  "",
		"http://localhost:5174":          "",
		"http://[::1]:8080":              "http://[::1]:8080",
		"null":                           "",
		"":                               "",
	} {
		if got := cors.Allows(origin); got != want {
			t.Errorf("Allows(%q) = %q, want %q", origin, got, want)
		}
	}
	any, err := config.Parse("t.yaml", []byte(base+"    origins: [\"*\"]\n"))
	if err != nil || any.Response.CORS.Allows("https://anyone.org") != "*" {
		t.Errorf("origins *: %v", err)
	}

	for body, want := range map[string]string{
		`    origins: ["app.example.com"]`:            `t.yaml:4:15: response.cors.origins[0]: "app.example.com" is not an origin`,
		`    origins: ["https://app.example.com/"]`:   `"https://app.example.com/" is not an origin`,
		`    origins: ["https://a.com/path"]`:         `"https://a.com/path" is not an origin`,
		`    origins: ["ftp://a.com"]`:                `"ftp://a.com" is not an origin`,
		`    origins: ["https://*.*.a.com"]`:          `"https://*.*.a.com" is not an origin`,
		`    origins: ["https://user@a.com"]`:         `"https://xxxxx@a.com" is not an origin`, // a user information alone may be a password
		`    origins: ["https://bücher.example"]`:     `"https://bücher.example": write the host as browsers send it, in ASCII`,
		"    origins: [\"*\"]\n    credentials: true": `t.yaml:5:18: response.cors.credentials: origins * allows any page, which browsers refuse with credentials`,
		`    allow: [x]`:                              `response.cors.allow`,
	} {
		_, err := config.Parse("t.yaml", []byte(base+body+"\n"))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %s", body, err, want)
		}
	}
}

// A browser's Origin never holds its scheme's default port (RFC 6454,
// section 6.1): https://app.example.com:443 loaded and matched no page of
// https://app.example.com, so their scripts saw a network error in place of
// each 429. Such an origin is refused at its line, saying what to write.
func TestCORSOriginWithTheDefaultPortIsRefused(t *testing.T) {
	base := "plans: {p: {limits: [{name: m, algorithm: gcra, quantity: 1, window: 1s}]}}\nresponse:\n  cors:\n"
	for origin, want := range map[string]string{
		"https://app.example.com:443": `t.yaml:4:15: response.cors.origins[0]: "https://app.example.com:443": browsers send an origin without its scheme's default port: write "https://app.example.com"`,
		"http://localhost:80":         `t.yaml:4:15: response.cors.origins[0]: "http://localhost:80": browsers send an origin without its scheme's default port: write "http://localhost"`,
		"https://*.example.net:443":   `t.yaml:4:15: response.cors.origins[0]: "https://*.example.net:443": browsers send an origin without its scheme's default port: write "https://*.example.net"`,
	} {
		_, err := config.Parse("t.yaml", []byte(base+"    origins: [\""+origin+"\"]\n"))
		if err == nil || err.Error() != want {
			t.Errorf("%s:\n%v\nwant exactly:\n%s", origin, err, want)
		}
	}
	for _, ok := range []string{"https://app.example.com:8443", "http://localhost:443", "https://app.example.com"} {
		if _, err := config.Parse("t.yaml", []byte(base+"    origins: [\""+ok+"\"]\n")); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}
