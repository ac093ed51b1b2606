package httpwire

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHeadIsWhatWentOverTheWire(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			http.Redirect(w, r, "/page?q=1", http.StatusFound)
			return
		}
		w.Header().Set("X-Answer", "42")
		w.Header().Set("Content-Type", "text/plain")
		w.(http.Flusher).Flush() // chunked: net/http consumes Transfer-Encoding
		io.WriteString(w, "hello")
	}))
	defer srv.Close()

	ctx, rec := WithRecorder(t.Context())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/moved", nil)
	req.Header.Set("User-Agent", "strata-test")
	req.Header.Set("If-None-Match", `"v1"`)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	resp.Body.Close()
	h := rec.Head(req, resp)

	wantReq := []string{"GET /page?q=1 HTTP/1.1\r\n", "Host: " + strings.TrimPrefix(srv.URL, "http://") + "\r\n",
		"User-Agent: strata-test\r\n", "If-None-Match: \"v1\"\r\n"}
	for _, w := range wantReq {
		if !strings.Contains(string(h.Request), w) {
			t.Errorf("request head lacks %q:\n%s", w, h.Request)
		}
	}
	if !strings.HasSuffix(string(h.Request), "\r\n\r\n") {
		t.Errorf("request head does not end with an empty line: %q", h.Request)
	}
	wantResp := []string{"HTTP/1.1 200 OK\r\n", "X-Answer: 42\r\n", "Content-Type: text/plain\r\n", "Transfer-Encoding: chunked\r\n"}
	for _, w := range wantResp {
		if !strings.Contains(string(h.Response), w) {
			t.Errorf("response head lacks %q:\n%s", w, h.Response)
		}
	}
	if h.RemoteAddr != "127.0.0.1" {
		t.Errorf("remote address %q, want 127.0.0.1", h.RemoteAddr)
	}
}
