package fetch

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
)

func TestIsPublic(t *testing.T) {
	tests := []struct {
		addr string
		want bool
	}{
		{"8.8.8.8", true},
		{"1.1.1.1", true},
		{"93.184.216.34", true},
		{"2606:4700::1111", true},
		{"2a00:1450:4001::200e", true},
		{"::ffff:8.8.8.8", true},
		{"64:ff9b::808:808", true},  // NAT64 of 8.8.8.8
		{"2002:808:808::1", true},   // 6to4 of 8.8.8.8
		{"100.63.255.255", true},    // just below CGNAT
		{"100.128.0.0", true},       // just above CGNAT
		{"172.15.255.255", true},    // just below RFC 1918
		{"172.32.0.0", true},        // just above RFC 1918
		{"127.0.0.1", false},        // loopback
		{"127.255.255.254", false},  // loopback
		{"::1", false},              // loopback
		{"::ffff:127.0.0.1", false}, // IPv4-mapped loopback
		{"::ffff:10.1.2.3", false},  // IPv4-mapped private
		{"::127.0.0.1", false},      // IPv4-compatible
		{"10.0.0.1", false},         // RFC 1918
		{"172.16.0.1", false},       // RFC 1918
		{"172.31.255.255", false},   // RFC 1918
		{"192.168.1.1", false},      // RFC 1918
		{"100.64.0.1", false},       // CGNAT
		{"100.127.255.255", false},  // CGNAT
		{"169.254.169.254", false},  // link-local: cloud metadata
		{"fe80::1", false},          // link-local
		{"fe80::1%eth0", false},     // link-local, zoned
		{"fc00::1", false},          // ULA
		{"fd12:3456::1", false},     // ULA
		{"fd12:3456::1%eth0", false},
		{"224.0.0.1", false},           // multicast
		{"239.255.255.250", false},     // multicast
		{"ff02::1", false},             // multicast
		{"ff0e::1", false},             // global multicast is still multicast
		{"0.0.0.0", false},             // unspecified
		{"0.1.2.3", false},             // "this network"
		{"::", false},                  // unspecified
		{"255.255.255.255", false},     // broadcast
		{"240.0.0.1", false},           // reserved
		{"198.18.0.1", false},          // benchmarking
		{"192.0.2.1", false},           // documentation
		{"2001:db8::1", false},         // documentation
		{"64:ff9b::7f00:1", false},     // NAT64 of 127.0.0.1
		{"64:ff9b::a00:1", false},      // NAT64 of 10.0.0.1
		{"64:ff9b:1::1", false},        // local-use NAT64
		{"2002:7f00:1::1", false},      // 6to4 of 127.0.0.1
		{"2002:c0a8:101::1", false},    // 6to4 of 192.168.1.1
		{"2001:0:4136:e378::1", false}, // Teredo
		{"fec0::1", false},             // site-local
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			if got := isPublic(netip.MustParseAddr(tt.addr)); got != tt.want {
				t.Errorf("isPublic(%s) = %v, want %v", tt.addr, got, tt.want)
			}
		})
	}
	if isPublic(netip.Addr{}) {
		t.Error("the zero Addr is public")
	}
}

func TestGuardCheck(t *testing.T) {
	// Pure checks, no dialling: public addresses here are never contacted.
	public := netip.MustParseAddr("93.184.216.34")
	loop := netip.MustParseAddr("127.0.0.1")
	mapped := netip.MustParseAddr("::ffff:127.0.0.1")
	g := &guard{allowPrivate: func(h string) bool { return h == "seed.test" }}
	tests := []struct {
		name  string
		host  string
		addrs []netip.Addr
		ok    bool
		msg   string
	}{
		{"public", "x.test", []netip.Addr{public}, true, ""},
		{"public-then-private", "x.test", []netip.Addr{public, loop}, false, "private address 127.0.0.1 not allowed"},
		{"mapped", "x.test", []netip.Addr{mapped}, false, "private address ::ffff:127.0.0.1 not allowed"},
		{"seeded", "seed.test", []netip.Addr{public, loop}, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := g.check(tt.host, tt.addrs)
			if (err == nil) != tt.ok || (err != nil && (err.Error() != tt.msg || !errors.Is(err, ErrPrivateAddress))) {
				t.Errorf("check = %v", err)
			}
		})
	}
	if err := (&guard{}).check("seed.test", []netip.Addr{loop}); err == nil {
		t.Error("nil AllowPrivate allowed a private address")
	}
}

func TestGuardDialsCheckedAddress(t *testing.T) {
	// A resolver that answers differently each time (DNS rebinding) must
	// be asked once per dial: the address checked is the address dialled.
	calls := 0
	g := &guard{
		lookup: func(ctx context.Context, host string) ([]netip.Addr, error) {
			calls++
			if calls == 1 {
				return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
			}
			return []netip.Addr{netip.MustParseAddr("198.51.100.1")}, nil
		},
	}
	_, err := g.DialContext(context.Background(), "tcp", "rebind.test:80")
	if !errors.Is(err, ErrPrivateAddress) || calls != 1 {
		t.Errorf("error %v after %d lookups", err, calls)
	}
	for _, addr := range []string{"no-port", "a.test:http", "a.test:99999"} {
		if _, err := g.DialContext(context.Background(), "tcp", addr); err == nil {
			t.Errorf("dialled %q", addr)
		}
	}
}

func TestParseContentType(t *testing.T) {
	tests := []struct {
		in, mediaType, charset string
	}{
		{"text/html", "text/html", ""},
		{"Text/HTML; Charset=ISO-8859-1", "text/html", "ISO-8859-1"},
		{`text/html; charset="utf-8"`, "text/html", "utf-8"},
		{"text/html;charset=utf-8;;", "text/html", ""}, // malformed: type survives
		{"text/html; charset", "text/html", ""},
		{"  application/xhtml+xml ; q=1", "application/xhtml+xml", ""},
		{"", "", ""},
		{"html", "", ""},
		{"text/", "", ""},
		{"/html", "", ""},
		{"te xt/html; x", "", ""},
		{"text/h\xffml; x=", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			mt, cs := parseContentType(tt.in)
			if mt != tt.mediaType || cs != tt.charset {
				t.Errorf("parseContentType(%q) = %q, %q; want %q, %q", tt.in, mt, cs, tt.mediaType, tt.charset)
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	date := time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC)
	now := date.Add(time.Hour) // our clock differs from the server's
	tests := []struct {
		name, in string
		date     time.Time
		want     time.Duration
	}{
		{"seconds", "120", date, 120 * time.Second},
		{"seconds-padded", " 5 ", date, 5 * time.Second},
		{"zero", "0", date, 0},
		{"negative", "-5", date, 0},
		{"fraction", "1.5", date, 0},
		{"huge", "99999999999999999999999", date, maxRetryAfter},
		{"over-a-year", "40000000", date, maxRetryAfter},
		{"date-vs-server-date", date.Add(90 * time.Second).Format(http.TimeFormat), date, 90 * time.Second},
		{"date-vs-now", now.Add(30 * time.Second).Format(http.TimeFormat), time.Time{}, 30 * time.Second},
		{"date-past", date.Add(-time.Minute).Format(http.TimeFormat), date, 0},
		{"date-rfc850", "Friday, 01-Mar-24 10:01:00 GMT", date, time.Minute},
		{"date-far-future", "Fri, 01 Mar 9999 10:00:00 GMT", date, maxRetryAfter},
		{"junk", "later", date, 0},
		{"empty", "", date, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseRetryAfter(tt.in, tt.date, now); got != tt.want {
				t.Errorf("parseRetryAfter(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestDecodeTextTruncated(t *testing.T) {
	// A cap can split a UTF-8 rune; the body must still count as UTF-8.
	body := []byte(strings.Repeat("é", 600))
	cut := body[:len(body)-1]
	text, cs := decodeText(cut, "text/html", "text/html", true)
	if cs != "utf-8" || !utf8.Valid(text) {
		t.Errorf("charset %q, valid %v", cs, utf8.Valid(text))
	}
}

func TestKindAndError(t *testing.T) {
	names := map[Kind]string{
		Other: "other", DNS: "dns", Refused: "refused", TLS: "tls", Timeout: "timeout",
		Private: "private", Redirect: "redirect", Protocol: "protocol", Canceled: "canceled", Kind(99): "unknown",
	}
	for k, want := range names {
		if k.String() != want {
			t.Errorf("Kind(%d).String() = %q, want %q", int(k), k.String(), want)
		}
	}

	cause := context.DeadlineExceeded
	err := &Error{Op: "fetch", URL: "https://a.test/x", Kind: Timeout, Err: &timeoutError{limit: 30 * time.Second, cause: cause}}
	if got, want := err.Error(), "fetch https://a.test/x: timeout after 30s"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) || !err.Transient() {
		t.Error("timeout error does not match its sentinels")
	}

	transient := []struct {
		name string
		err  *Error
		want bool
	}{
		{"refused", &Error{Kind: Refused, Err: syscall.ECONNREFUSED}, true},
		{"reset", &Error{Kind: Protocol, Err: syscall.ECONNRESET}, true},
		{"dns-timeout", &Error{Kind: DNS, Err: &net.DNSError{IsTimeout: true}}, true},
		{"dns-not-found", &Error{Kind: DNS, Err: &net.DNSError{IsNotFound: true}}, false},
		{"dns-fake", &Error{Kind: DNS, Err: errors.New("nope")}, false},
		{"private", &Error{Kind: Private, Err: ErrPrivateAddress}, false},
		{"tls", &Error{Kind: TLS, Err: errors.New("tls: bad")}, false},
		{"canceled", &Error{Kind: Canceled, Err: context.Canceled}, false},
	}
	for _, tt := range transient {
		if got := tt.err.Transient(); got != tt.want {
			t.Errorf("%s: Transient() = %v", tt.name, got)
		}
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"120", "0", "-1", "Fri, 01 Mar 2024 10:01:00 GMT", "Friday, 01-Mar-24 10:01:00 GMT",
		"Fri Mar  1 10:01:00 2024", "99999999999999999999", "", " 7 "} {
		f.Add(s)
	}
	date := time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		for _, d := range []time.Time{date, {}} {
			got := parseRetryAfter(v, d, date)
			if got < 0 || got > maxRetryAfter {
				t.Fatalf("parseRetryAfter(%q) = %v out of range", v, got)
			}
		}
	})
}

func FuzzParseContentType(f *testing.F) {
	for _, s := range []string{"text/html; charset=utf-8", "TEXT/PLAIN", `text/html; charset="x"`, "text/html;;", "a/b; c", "", "\xff/\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		mt, _ := parseContentType(v)
		if mt != strings.ToLower(mt) {
			t.Fatalf("media type %q not lower-case", mt)
		}
		if mt != "" && strings.Count(mt, "/") != 1 {
			t.Fatalf("media type %q is not type/subtype", mt)
		}
		if isKeptType(mt) && !strings.Contains(strings.ToLower(v), mt) {
			t.Fatalf("kept type %q invented from %q", mt, v)
		}
	})
}

func FuzzDecodeText(f *testing.F) {
	f.Add([]byte("<meta charset=koi8-r>\xc1"), "text/html", "text/html")
	f.Add([]byte("\xff\xfe<\x00"), "text/html", "text/html; charset=utf-8")
	f.Add([]byte("caf\xe9"), "text/plain", "text/plain; charset=bogus")
	f.Fuzz(func(t *testing.T, body []byte, mediaType, contentType string) {
		text, _ := decodeText(body, mediaType, contentType, len(body)%2 == 0)
		if !utf8.Valid(text) {
			t.Fatalf("decodeText produced invalid UTF-8 %q", text)
		}
	})
}
