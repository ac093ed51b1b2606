package serve

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/strata-crawler/strata/internal/store"
)

// searchWindow is how many URL rows one substring search request examines at most; a search for a
// rare string goes on from where the last request stopped when the user asks for more.
const searchWindow = 200000

type searchData struct {
	Q      string
	Prefix bool // the query is a URL prefix, answered from the url index
	Hits   []store.URLHit
	Next   string
	Done   bool // the search has examined every URL
	From   int64
}

// search finds URLs by substring, or by prefix when the query starts with a scheme.
func (s *Server) search(r *http.Request) (*view, error) {
	ctx := r.Context()
	q := r.URL.Query()
	d := searchData{Q: strings.TrimSpace(q.Get("q"))}
	v := &view{Template: "search", Title: "Search", Nav: "search", Data: &d}
	if d.Q == "" {
		return v, nil
	}
	if len(d.Q) > 2048 {
		return nil, badRequestf("the search is longer than 2,048 characters")
	}
	v.Title = "Search: " + d.Q
	if strings.HasPrefix(d.Q, "http://") || strings.HasPrefix(d.Q, "https://") {
		d.Prefix = true
		hits, err := s.opts.DB.URLsWithPrefix(ctx, d.Q, q.Get("after"), hitsPerPage+1)
		if err != nil {
			return nil, err
		}
		var more bool
		if d.Hits, more = trim(hits, hitsPerPage); more {
			d.Next = "/search?" + url.Values{"q": {d.Q}, "after": {d.Hits[len(d.Hits)-1].URL}}.Encode()
		}
		d.Done = !more
		return v, nil
	}
	after, err := intQuery(r, "from")
	if err != nil {
		return nil, err
	}
	d.From = after
	hits, next, err := s.opts.DB.URLsContaining(ctx, d.Q, after, searchWindow, hitsPerPage)
	if err != nil {
		return nil, err
	}
	d.Hits = hits
	if next > 0 {
		d.Next = "/search?" + url.Values{"q": {d.Q}, "from": {strconv.FormatInt(next, 10)}}.Encode()
	} else {
		d.Done = true
	}
	return v, nil
}
