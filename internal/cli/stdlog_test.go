package cli_test

import (
	"bufio"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
)

// rudeServer answers every request on 127.0.0.1 with an empty 200 and then, on the same connection,
// bytes nobody asked for — a terminal escape sequence among them — which net/http's transport
// reports through the log package once the connection is idle. It returns the server's base URL.
func rudeServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				br := bufio.NewReader(conn)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					req.Body.Close()
					if _, err := conn.Write([]byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 0\r\n\r\n" +
						"\x1b[31mHTTP/1.1 200 OK\r\n\r\nextra")); err != nil {
						return
					}
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// TestStandardLibraryLogsGoThroughTheLogger is issue 18's item 22: lines that Go's HTTP library
// writes to the log package (here the transport's "Unsolicited response received on idle HTTP
// channel", quoting what the server sent) came out raw on standard error, outside the configured
// format. They are records of the command's logger, in its format, with the remote bytes quoted.
func TestStandardLibraryLogsGoThroughTheLogger(t *testing.T) {
	base := rudeServer(t)
	e := newEnv(t, loopbackConfig+"[log]\nformat = \"json\"\n")
	e.mustRun("seed", "add", base+"/")
	_, errs, code := e.run("crawl")
	if code != 0 {
		t.Fatalf("crawl: exit %d\n%s", code, errs)
	}
	if strings.ContainsRune(errs, 0x1b) {
		t.Errorf("standard error carries a raw escape byte from the server:\n%q", errs)
	}
	found := false
	for _, line := range strings.Split(strings.TrimSpace(errs), "\n") {
		var rec struct{ Level, Msg string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("a line of standard error is not in the configured JSON format: %q", line)
			continue
		}
		if strings.Contains(rec.Msg, "Unsolicited response") {
			found = rec.Level == "WARN"
		}
	}
	if !found {
		t.Errorf("no warning in the log about the unsolicited response:\n%s", errs)
	}
}
