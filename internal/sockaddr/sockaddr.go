// Package sockaddr tells a Unix-domain socket's address from others, for
// the packages that judge a peer by its listener: on a Unix socket, a
// peer's address is the path its client bound its end to, its choice,
// which may read as an IP address ("127.0.0.1:1").
package sockaddr

import "net"

// IsUnix reports whether a is the address of a Unix-domain socket: a
// *net.UnixAddr, or an address of the network "unix" or "unixpacket".
// False for nil.
func IsUnix(a net.Addr) bool {
	switch a := a.(type) {
	case *net.UnixAddr:
		return true
	case net.Addr:
		n := a.Network()
		return n == "unix" || n == "unixpacket"
	}
	return false
}
