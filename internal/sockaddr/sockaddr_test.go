package sockaddr_test

import (
	"net"
	"testing"

	"github.com/sluice-dev/sluice/internal/sockaddr"
)

// IsUnix tells the addresses of Unix-domain sockets (a listener's, or the
// unnamed one a PROXY header without a client becomes) from TCP's, UDP's
// and none.
func TestIsUnix(t *testing.T) {
	for _, c := range []struct {
		a    net.Addr
		want bool
	}{
		{&net.UnixAddr{Net: "unix", Name: "/run/app.sock"}, true},
		{&net.UnixAddr{Net: "unix"}, true},
		{&net.UnixAddr{}, true},
		{otherAddr{"unixpacket"}, true},
		{otherAddr{"unixgram"}, false},
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}, false},
		{&net.UDPAddr{}, false},
		{nil, false},
	} {
		if got := sockaddr.IsUnix(c.a); got != c.want {
			t.Errorf("IsUnix(%#v) = %v, want %v", c.a, got, c.want)
		}
	}
}

// otherAddr is an address of network n that is no *net.UnixAddr.
type otherAddr struct{ n string }

func (a otherAddr) Network() string { return a.n }
func (a otherAddr) String() string  { return "127.0.0.1:1" }
