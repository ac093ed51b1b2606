package demoweb_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/strata-crawler/strata/internal/demoweb"
)

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func TestPagesChangeByDay(t *testing.T) {
	w, err := demoweb.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if !strings.HasPrefix(w.URL("/"), "http://127.0.0.1:") {
		t.Fatalf("demo web at %s, want loopback", w.URL("/"))
	}
	day1 := map[string]string{}
	for _, p := range []string{"/", "/about", "/weekly", "/archive/3", "/forum/3"} {
		day1[p] = get(t, w.URL(p))
	}
	w.Advance()
	for p, changes := range map[string]bool{"/": true, "/about": false, "/weekly": false, "/archive/3": false, "/forum/3": true} {
		if got := get(t, w.URL(p)) != day1[p]; got != changes {
			t.Errorf("%s changed from day 1 to 2: %v, want %v", p, got, changes)
		}
	}
	for i := 0; i < 6; i++ {
		w.Advance()
	}
	if get(t, w.URL("/weekly")) == day1["/weekly"] {
		t.Error("the weekly column did not change after seven days")
	}
}
