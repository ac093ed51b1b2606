package fetch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"time"
)

// Sentinels for errors.Is. Each is wrapped with detail, so its text is the
// start of a phrase: "private address 10.0.0.1 not allowed",
// "timeout after 30s", "too many redirects (limit 5)".
var (
	ErrPrivateAddress   = errors.New("private address")
	ErrTooManyRedirects = errors.New("too many redirects")
	ErrTimeout          = errors.New("timeout")
)

// Kind classifies why a fetch got no response.
type Kind int

const (
	Other    Kind = iota // anything not below
	DNS                  // the host name did not resolve
	Refused              // connection refused
	TLS                  // handshake or certificate failure
	Timeout              // PageTimeout ran out
	Private              // the address guard refused a non-public address
	Redirect             // too many redirects, a bad Location, or CheckRedirect said no
	Protocol             // malformed HTTP, an undecodable body, a broken connection
	Canceled             // the caller's context ended
)

// kindUnknown asks fail to classify the error itself.
const kindUnknown Kind = -1

var kindNames = [...]string{
	Other:    "other",
	DNS:      "dns",
	Refused:  "refused",
	TLS:      "tls",
	Timeout:  "timeout",
	Private:  "private",
	Redirect: "redirect",
	Protocol: "protocol",
	Canceled: "canceled",
}

func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Error is the error returned by Fetch and LoopbackOnly.
type Error struct {
	Op   string // "fetch" or "lookup"
	URL  string // the URL requested (the host for "lookup")
	Kind Kind
	Err  error
}

func (e *Error) Error() string { return e.Op + " " + e.URL + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Transient reports whether trying again later may succeed: timeouts,
// refused and reset connections, a server hanging up before answering, and
// temporary DNS failures. HTTP statuses such as 5xx are not errors here;
// judging them is the caller's business.
func (e *Error) Transient() bool {
	switch e.Kind {
	case Timeout, Refused:
		return true
	case DNS:
		var d *net.DNSError
		return errors.As(e.Err, &d) && (d.IsTemporary || d.IsTimeout)
	case Protocol, Other:
		// Both usually mean an overloaded or restarting server. io.EOF,
		// unlike io.ErrUnexpectedEOF, means no response byte came at all.
		return errors.Is(e.Err, syscall.ECONNRESET) || errors.Is(e.Err, io.EOF)
	}
	return false
}

// timeoutError reports the page deadline, whatever layer noticed it first.
type timeoutError struct {
	limit time.Duration
	cause error
}

func (e *timeoutError) Error() string   { return "timeout after " + e.limit.String() }
func (e *timeoutError) Unwrap() []error { return []error{ErrTimeout, e.cause} }

// lookupError is a failure of the resolver, whichever resolver it is.
type lookupError struct {
	host string
	err  error
}

func (e *lookupError) Error() string {
	var d *net.DNSError
	if errors.As(e.err, &d) {
		return e.err.Error() // already says "lookup host: ..."
	}
	return "lookup " + e.host + ": " + e.err.Error()
}

func (e *lookupError) Unwrap() error { return e.err }

// classify picks the Kind of a transport or body error. The caller's
// context has been checked already; pageCtx is the one with PageTimeout.
func classify(pageCtx context.Context, err error) Kind {
	var (
		lookupErr *lookupError
		dnsErr    *net.DNSError
		decodeErr *decodeError
	)
	switch {
	case errors.Is(err, ErrPrivateAddress):
		return Private
	case errors.Is(err, ErrTooManyRedirects):
		return Redirect
	case errors.Is(pageCtx.Err(), context.DeadlineExceeded), isTimeout(err):
		return Timeout
	case errors.Is(err, context.Canceled):
		return Canceled
	case errors.As(err, &lookupErr), errors.As(err, &dnsErr):
		return DNS
	case errors.Is(err, syscall.ECONNREFUSED):
		return Refused
	case isTLS(err):
		return TLS
	case errors.As(err, &decodeErr), isProtocol(err):
		return Protocol
	}
	return Other
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, os.ErrDeadlineExceeded) ||
		(errors.As(err, &ne) && ne.Timeout())
}

func isTLS(err error) bool {
	var (
		recordErr   tls.RecordHeaderError
		alertErr    tls.AlertError
		verifyErr   *tls.CertificateVerificationError
		authErr     x509.UnknownAuthorityError
		hostErr     x509.HostnameError
		invalidErr  x509.CertificateInvalidError
		echRejected *tls.ECHRejectionError
	)
	if errors.As(err, &recordErr) || errors.As(err, &alertErr) ||
		errors.As(err, &verifyErr) || errors.As(err, &authErr) ||
		errors.As(err, &hostErr) || errors.As(err, &invalidErr) ||
		errors.As(err, &echRejected) {
		return true
	}
	// Most crypto/tls errors are plain errors.New("tls: ...") values.
	return strings.Contains(err.Error(), "tls: ")
}

func isProtocol(err error) bool {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	// net/http reports bad responses only as text.
	msg := err.Error()
	return strings.Contains(msg, "malformed HTTP") || strings.Contains(msg, "http2:")
}
