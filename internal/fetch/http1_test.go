package fetch

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestFetchSpeaksHTTP1ToAnHTTP2Server: a server offering h2 is fetched over HTTP/1.1, so the
// exchange has heads the WARC records can keep (see the transport's TLSNextProto).
func TestFetchSpeaksHTTP1ToAnHTTP2Server(t *testing.T) {
	var proto int
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proto = r.ProtoMajor
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<p>over TLS</p>"))
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)

	// The server does speak HTTP/2 to a client that asks for it; otherwise this test proves nothing.
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Fatalf("the test server answered its own client over %s, want HTTP/2", resp.Proto)
	}

	c := newClient(t, testOptions())
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	c.transport.TLSClientConfig = &tls.Config{RootCAs: roots, ServerName: "example.com"}
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	got, err := c.Fetch(context.Background(), Request{URL: "https://a.test:" + port + "/p"})
	if err != nil {
		t.Fatal(err)
	}
	if proto != 1 {
		t.Errorf("the server saw HTTP/%d, want HTTP/1.1", proto)
	}
	if !bytes.HasPrefix(got.Head.Response, []byte("HTTP/1.1 200")) {
		t.Errorf("response head %q, want an HTTP/1.1 status line", firstLine(got.Head.Response))
	}
	if line := firstLine(got.Head.Request); !bytes.HasSuffix(line, []byte(" HTTP/1.1")) {
		t.Errorf("request line %q, want HTTP/1.1", line)
	}
}

func firstLine(b []byte) []byte {
	if i := bytes.IndexByte(b, '\r'); i >= 0 {
		return b[:i]
	}
	return b
}
