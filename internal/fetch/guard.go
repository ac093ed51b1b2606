package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// guard dials only addresses that passed the private-network check. The
// check runs on resolved addresses at dial time, and the checked address is
// the one dialled, so neither a link to a name pointing at 127.0.0.1 nor
// DNS rebinding between check and connect can reach the local network.
type guard struct {
	dialer       net.Dialer
	lookup       func(ctx context.Context, host string) ([]netip.Addr, error)
	allowPrivate func(host string) bool
}

// DialContext is the transport's dialer. addr is host:port as the
// transport derived it from the URL.
func (g *guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("bad port in %q", addr)
	}
	host = strings.ToLower(host)
	addrs, err := g.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	if err := g.check(host, addrs); err != nil {
		return nil, err
	}
	// The first failure speaks for the rest, which are usually the same
	// kind; joining them would put newlines into log lines.
	var firstErr error
	for _, a := range addrs {
		a = a.Unmap()
		if (network == "tcp4" && !a.Is4()) || (network == "tcp6" && !a.Is6()) {
			continue
		}
		conn, err := g.dialer.DialContext(ctx, network, netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	if firstErr == nil {
		return nil, &lookupError{host: host, err: fmt.Errorf("no %s address", network)}
	}
	return nil, firstErr
}

// check refuses non-public addresses unless host is allowed them. Every
// address must pass, not just the one we would dial first: a failed connect
// would otherwise fall through to a private one.
func (g *guard) check(host string, addrs []netip.Addr) error {
	if g.allowPrivate != nil && g.allowPrivate(host) {
		return nil
	}
	for _, a := range addrs {
		if !isPublic(a) {
			return fmt.Errorf("%w %s not allowed", ErrPrivateAddress, a)
		}
	}
	return nil
}

// resolve returns the addresses for host, an IP literal or a name.
func (g *guard) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	addrs, err := g.lookup(ctx, host)
	if err != nil {
		return nil, &lookupError{host: host, err: err}
	}
	if len(addrs) == 0 {
		return nil, &lookupError{host: host, err: errors.New("no addresses")}
	}
	return addrs, nil
}

// LoopbackOnly reports whether every address of host is a loopback address
// (or host is a loopback IP literal); the crawler uses it for its loopback
// politeness exception. host may be bracketed ("[::1]") but has no port.
func (c *Client) LoopbackOnly(ctx context.Context, host string) (bool, error) {
	host = strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	g := guard{lookup: c.opts.LookupNetIP}
	addrs, err := g.resolve(ctx, host)
	if err != nil {
		kind := DNS
		if ctx.Err() != nil {
			kind = Canceled
		}
		return false, &Error{Op: "lookup", URL: host, Kind: kind, Err: err}
	}
	for _, a := range addrs {
		if !a.Unmap().IsLoopback() {
			return false, nil
		}
	}
	return true, nil
}

// nonPublic lists special-purpose ranges (RFC 6890 and successors) that the
// netip predicates used by isPublic do not cover. Read-only.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // CGNAT shared space
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // TEST-NET-1
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // TEST-NET-2
	netip.MustParsePrefix("203.0.113.0/24"),  // TEST-NET-3
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and broadcast
	netip.MustParsePrefix("::/96"),           // IPv4-compatible (deprecated), ::, ::1
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("100::/64"),        // discard-only
	netip.MustParsePrefix("2001::/32"),       // Teredo: tunnels to an obfuscated IPv4
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("fec0::/10"),       // site-local (deprecated)
}

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// isPublic reports whether a is a globally routable unicast address. IPv6
// forms that embed an IPv4 address (mapped, NAT64, 6to4) are judged by the
// embedded address, since that is where the packets end up.
func isPublic(a netip.Addr) bool {
	// Prefix.Contains never matches a zoned address, so drop the zone.
	a = a.Unmap().WithZone("")
	if !a.IsValid() {
		return false
	}
	if a.Is6() {
		b := a.As16()
		switch {
		case nat64.Contains(a):
			return isPublic(netip.AddrFrom4([4]byte(b[12:16])))
		case sixToFour.Contains(a):
			return isPublic(netip.AddrFrom4([4]byte(b[2:6])))
		}
	}
	if a.IsLoopback() || a.IsPrivate() || a.IsUnspecified() ||
		a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(a) {
			return false
		}
	}
	return true
}
