package testweb

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// Text serves body with the given Content-Type.
func Text(contentType, body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write([]byte(body))
	})
}

// Status answers every request with code and a short body.
func Status(code int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, http.StatusText(code), code)
	})
}

// RetryAfter answers with code and a Retry-After of after, in seconds.
func RetryAfter(code int, after time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", strconv.Itoa(int(after.Seconds())))
		http.Error(w, http.StatusText(code), code)
	})
}

// Redirect answers with a redirect to location.
func Redirect(location string, code int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, location, code)
	})
}

// Flaky answers the first failures requests with code, then hands over to then.
func Flaky(failures int, code int, then http.Handler) http.Handler {
	var n atomic.Int64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) <= int64(failures) {
			http.Error(w, http.StatusText(code), code)
			return
		}
		then.ServeHTTP(w, r)
	})
}

// Slow drips an HTML page of chunks pieces, one every interval: a slow-loris trap.
func Slow(chunks int, interval time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusOK)
		fl, _ := w.(http.Flusher)
		w.Write([]byte("<html><body>"))
		for i := 0; i < chunks; i++ {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(interval):
			}
			fmt.Fprintf(w, "<p>drip %d</p>\n", i)
			if fl != nil {
				fl.Flush()
			}
		}
	})
}

// Huge serves an HTML page of n bytes.
func Huge(n int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Length", strconv.Itoa(n))
		line := bytes.Repeat([]byte("<p>huge page text huge page text huge page text</p>\n"), 1024)
		for written := 0; written < n; {
			chunk := line
			if n-written < len(chunk) {
				chunk = chunk[:n-written]
			}
			if _, err := w.Write(chunk); err != nil {
				return
			}
			written += len(chunk)
		}
	})
}

// GzipBomb serves a gzip-encoded HTML body that inflates to n bytes of zeros.
func GzipBomb(n int) http.Handler {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zero := make([]byte, 1<<20)
	for left := n; left > 0; left -= len(zero) {
		zw.Write(zero[:min(left, len(zero))])
	}
	zw.Close()
	body := buf.Bytes()
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	})
}

// Conditional serves body with an ETag and answers If-None-Match with 304 while the tag matches.
func Conditional(etag, body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(body))
	})
}
