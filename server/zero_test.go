package server_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/degrade"
	"github.com/sluice-dev/sluice/server"
)

// The zero Server serves nothing and panics nowhere: Run and Serve return
// an error (Serve closing the listeners it was given), its handlers answer
// 503 (a nil handler would have served http.DefaultServeMux), and the rest
// reports nothing.
func TestZeroServerServesNothing(t *testing.T) {
	var s server.Server
	if err := s.Run(context.Background()); err == nil {
		t.Error("Run: no error")
	}
	pub, adm := listenLoopback(t), listenLoopback(t)
	if err := s.Serve(context.Background(), server.Listeners{Public: pub, Admin: adm}); err == nil {
		t.Error("Serve: no error")
	}
	for _, l := range []net.Listener{pub, adm} {
		if tl, ok := l.(*net.TCPListener); ok {
			tl.SetDeadline(time.Now().Add(100 * time.Millisecond)) // an open listener fails the test, not hangs it
		}
		if c, err := l.Accept(); err == nil || !errors.Is(err, net.ErrClosed) {
			if c != nil {
				c.Close()
			}
			c.Close()
			t.Errorf("listener %s still open after Serve", l.Addr())
		}
	}
	for name, h := range map[string]http.Handler{"public": s.PublicHandler(), "admin": s.AdminHandler()} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/debug/pprof/", nil))
		if rec.Code != http.StatusServiceUnavailable {
			t.Errorf("%s handler: %d, want 503", name, rec.Code)
		}
	}
	if s.Config() != nil || s.EnvoyAddr() != "" || s.SampleNow() != degrade.Normal || s.Degradation().Level != degrade.Normal {
		t.Errorf("the zero Server reports a configuration or a level: %v %q %+v", s.Config(), s.EnvoyAddr(), s.Degradation())
	}
	if err := s.Reload(); err == nil {
		t.Error("Reload: no error")
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}
