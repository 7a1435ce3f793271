package server_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A form upload that keeps moving data is bounded by read_timeout between
// reads, not in all (config.Connections.ReadTimeout's doc; watchedBody),
// whatever the configuration names — a method too (here an exempt "GET
// /favicon.ico"), which makes the proxy judge a POST's _method: it reads
// none of the body for it. A multipart upload of 3 KB sent 150 bytes every
// 100 ms (2 s) behind a 1 s read_timeout reaches the upstream whole.
func TestASlowFormUploadOutlivesReadTimeoutWhateverTheConfigurationNames(t *testing.T) {
	for _, tc := range []struct{ name, extra string }{
		{"no method named", ""},
		{"a method named", "exempt: [\"GET /favicon.ico\"]\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, err := io.ReadAll(r.Body)
				if err != nil {
					return
				}
				fmt.Fprintf(w, "read %d", len(b))
			}))
			t.Cleanup(up.Close)
			srv, _ := loadServer(t, t.TempDir(), "upstream: "+up.URL+"\n"+strings.Replace(streamsConfig, "write_timeout: 1s", "write_timeout: 10s", 1)+tc.extra)
			addrs := serveOn(t, srv)

			const boundary = "XyZ"
			body := "--" + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.bin\"\r\n\r\n" +
				strings.Repeat("x", 2900) + "\r\n--" + boundary + "--\r\n"
			c, err := net.Dial("tcp", addrs.public)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(10 * time.Second))
			fmt.Fprintf(c, "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=%s\r\nContent-Length: %d\r\n\r\n", boundary, len(body))
			for i := 0; i < len(body); i += 150 {
				if _, err := io.WriteString(c, body[i:min(i+150, len(body))]); err != nil {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: "POST"})
			if err != nil {
				t.Fatalf("%s: %v, want 200", tc.name, err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if want := fmt.Sprintf("read %d", len(body)); resp.StatusCode != 200 || string(got) != want {
				t.Errorf("%s: a multipart upload moving 150 bytes every 100ms for 2s behind a 1s read_timeout: %d %q, want 200 %q", tc.name, resp.StatusCode, got, want)
			}
		})
	}
}

// A client over its limit is refused before its body is asked for: a POST
// sent with Expect: 100-continue gets its 429 without a 100 Continue, so
// that a refused upload is never sent (nginx's limit_req refuses before
// reading the body too), whatever the configuration names.
func TestARefusedFormUploadIsNotAskedForItsBody(t *testing.T) {
	for _, tc := range []struct{ name, extra string }{
		{"no method named", ""},
		{"a method named", "exempt: [\"GET /favicon.ico\"]\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				io.WriteString(w, "ok")
			}))
			t.Cleanup(up.Close)
			srv, _ := loadServer(t, t.TempDir(), "upstream: "+up.URL+`
plans:
  anonymous:
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 1, window: 1m}]
anonymous_plan: anonymous
`+tc.extra)
			addrs := serveOn(t, srv)
			resp, err := http.Post("http://"+addrs.public+"/upload", "text/plain", strings.NewReader("x"))
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()

			c, err := net.Dial("tcp", addrs.public)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(5 * time.Second))
			fmt.Fprintf(c, "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=XyZ\r\nContent-Length: 100000000\r\nExpect: 100-continue\r\n\r\n")
			line, err := bufio.NewReader(c).ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(line, "HTTP/1.1 429") {
				t.Errorf("%s: a client over its limit sending a 100 MB upload with Expect: 100-continue was first answered %q, want its 429 before any 100 Continue", tc.name, strings.TrimSpace(line))
			}
		})
	}
}
