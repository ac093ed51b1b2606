// Package httpwire records the head of an HTTP exchange as it went over the wire: the request line
// and header fields as net/http wrote them, and the response's status line and header fields as
// received, so that an archive can say exactly what was asked and answered.
//
// net/http gives a client no copy of the bytes it sent, and adds fields of its own (Host, and for
// HTTP/2 the pseudo-headers) after the caller's request is built; the fields are taken from
// httptrace's WroteHeaderField, which reports each one as it is written, in order. The response
// head is rebuilt from the parsed response: net/http keeps every field but not their order, so they
// are written sorted by name, and a Transfer-Encoding it consumed is put back.
package httpwire

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptrace"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Head is the head of one exchange: the request as sent and the response head as received.
type Head struct {
	Request    []byte // "GET /path HTTP/1.1\r\nHost: …\r\n…\r\n\r\n"; nil when no request was written
	Response   []byte // "HTTP/1.1 200 OK\r\n…\r\n\r\n"; nil when no response was received
	RemoteAddr string // the IP address the request went to, without the port; "" if unknown
}

// Recorder collects the request fields of the last request made under its context. It is safe
// for the concurrent calls httptrace makes.
type Recorder struct {
	mu     sync.Mutex
	fields []field
	addr   string
}

type field struct{ name, value string }

// WithRecorder returns a context whose requests are recorded by the returned Recorder. A new
// connection or a reused one starts a new request, so after redirects followed by an http.Client
// the Recorder holds the last hop's request.
func WithRecorder(ctx context.Context) (context.Context, *Recorder) {
	r := &Recorder{}
	trace := &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.fields = r.fields[:0]
			r.addr = ""
			if info.Conn != nil {
				r.addr = hostOnly(info.Conn.RemoteAddr().String())
			}
		},
		WroteHeaderField: func(key string, value []string) {
			r.mu.Lock()
			defer r.mu.Unlock()
			for _, v := range value {
				r.fields = append(r.fields, field{key, v})
			}
		},
	}
	return httptrace.WithClientTrace(ctx, trace), r
}

// Head returns the head of the exchange of req (the last request sent under the recorder's
// context) and resp, the response it got (nil if none).
func (r *Recorder) Head(req *http.Request, resp *http.Response) Head {
	r.mu.Lock()
	fields := append([]field(nil), r.fields...)
	addr := r.addr
	r.mu.Unlock()
	var h Head
	h.RemoteAddr = addr
	if len(fields) > 0 && req != nil {
		proto := "HTTP/1.1"
		if resp != nil && resp.ProtoMajor == 2 {
			proto = "HTTP/2"
		}
		target := req.URL.RequestURI()
		if resp != nil && resp.Request != nil && resp.Request.URL != nil {
			target = resp.Request.URL.RequestURI() // the hop that was answered
		}
		var b bytes.Buffer
		b.WriteString(req.Method + " " + target + " " + proto + "\r\n")
		for _, f := range fields {
			name := f.name
			if strings.HasPrefix(name, ":") {
				if name != ":authority" {
					continue // HTTP/2 pseudo-headers other than the host are in the request line
				}
				name = "Host"
			}
			b.WriteString(name + ": " + clean(f.value) + "\r\n")
		}
		b.WriteString("\r\n")
		h.Request = b.Bytes()
	}
	if resp != nil {
		h.Response = ResponseHead(resp)
	}
	return h
}

// ResponseHead is resp's status line and header fields in wire form.
func ResponseHead(resp *http.Response) []byte {
	var b bytes.Buffer
	proto := resp.Proto
	if proto == "" {
		proto = "HTTP/1.1"
	}
	status := resp.Status
	if status == "" {
		status = http.StatusText(resp.StatusCode)
		status = strings.TrimSpace(strconv.Itoa(resp.StatusCode) + " " + status)
	}
	b.WriteString(proto + " " + status + "\r\n")
	names := make([]string, 0, len(resp.Header))
	for k := range resp.Header {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		for _, v := range resp.Header[k] {
			b.WriteString(k + ": " + clean(v) + "\r\n")
		}
	}
	if len(resp.TransferEncoding) > 0 && resp.Header.Get("Transfer-Encoding") == "" {
		b.WriteString("Transfer-Encoding: " + strings.Join(resp.TransferEncoding, ", ") + "\r\n")
	}
	b.WriteString("\r\n")
	return b.Bytes()
}

// clean keeps a field value on its line: net/http already refuses CR and LF in values it sends and
// receives, so this only guards a head built from a hand-made response.
func clean(v string) string {
	if strings.ContainsAny(v, "\r\n") {
		return strings.NewReplacer("\r", " ", "\n", " ").Replace(v)
	}
	return v
}

// hostOnly strips the port from host:port, and the brackets from an IPv6 address.
func hostOnly(addr string) string {
	if i := strings.LastIndexByte(addr, ':'); i >= 0 && !strings.HasSuffix(addr, "]") {
		addr = addr[:i]
	}
	return strings.TrimSuffix(strings.TrimPrefix(addr, "["), "]")
}
