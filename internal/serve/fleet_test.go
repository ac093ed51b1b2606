package serve_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/strata-crawler/strata/internal/serve"
)

// fleetDB is a database as PostgreSQL serves it: no full-text index (the embedded Reader hides the
// SQLite store's), and the homes of the versions fleet workers archived.
type fleetDB struct {
	serve.Reader
	homes map[string]string // archive path → worker
}

func (d fleetDB) Home(_ context.Context, _ int64, path string) (string, string, bool, error) {
	w, ok := d.homes[path]
	return w, "/srv/" + w + "/archive", ok, nil
}

// TestFleetAndNoTextIndex: without a text index the search page says in one line that full-text
// search is not available, never an error; a version this machine cannot read that a fleet worker
// archived is named with its worker and root, on its text, diff and raw views; one no worker
// archived is gone, as before.
func TestFleetAndNoTextIndex(t *testing.T) {
	f := newFixture(t)
	id := f.ids[front]
	fetches := f.fetches[front]
	last := fetches[len(fetches)-1]
	v, err := f.db.FetchByID(t.Context(), last)
	if err != nil || v.Path == "" {
		t.Fatalf("front page's last fetch = %+v, %v; want a stored version", v, err)
	}
	homes := map[string]string{}
	for _, fid := range fetches {
		if g, err := f.db.FetchByID(t.Context(), fid); err == nil && g.Path != "" {
			homes[g.Path] = "worker-2"
		}
	}
	held := "held by worker worker-2, under its archive root /srv/worker-2/archive"
	for _, tt := range []struct {
		name   string
		db     fleetDB
		path   string
		status int
		want   string
	}{
		{"search", fleetDB{Reader: f.db}, "/search?q=tram", http.StatusOK, "Full-text search is not available"},
		{"text", fleetDB{Reader: f.db, homes: homes}, fmt.Sprintf("/page/%d/text", id), http.StatusOK, held},
		{"diff", fleetDB{Reader: f.db, homes: homes}, fmt.Sprintf("/page/%d/diff", id), http.StatusOK, held},
		{"raw", fleetDB{Reader: f.db, homes: homes}, fmt.Sprintf("/raw/%d", last), http.StatusOK, held},
		{"text of no worker's", fleetDB{Reader: f.db}, fmt.Sprintf("/page/%d/text", id), http.StatusGone, "archive directory does not exist"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv, err := serve.New(serve.Options{DB: tt.db})
			if err != nil {
				t.Fatal(err)
			}
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, httptest.NewRequest("GET", tt.path, nil))
			if rec.Code != tt.status || !strings.Contains(rec.Body.String(), tt.want) {
				t.Errorf("GET %s: %d, want %d with %q:\n%s", tt.path, rec.Code, tt.status, tt.want, rec.Body.String())
			}
		})
	}
}
