package serve

import (
	"errors"
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
	In     string // text or urls
	Site   string
	Prefix bool // the query is a URL prefix, answered from the url index
	Hits   []store.URLHit
	Text   []textHit
	Next   string
	Done   bool // the search has examined every URL
	From   int64
	// Coverage of the text index: Indexed of Stored; Behind when the newest versions are not in it.
	Behind bool
	NoText bool // the database keeps no text index (PostgreSQL): only URLs can be searched
}

// textHit is a version found by the full-text search, its snippet cut into plain and matched parts
// so that the template escapes all of it.
type textHit struct {
	store.TextHit
	Parts []snippetPart
}

type snippetPart struct {
	Text  string
	Match bool
}

// search finds versions by their text (the default), or URLs by substring, or by prefix when the
// query starts with a scheme.
func (s *Server) search(r *http.Request) (*view, error) {
	ctx := r.Context()
	q := r.URL.Query()
	d := searchData{Q: strings.TrimSpace(q.Get("q")), In: q.Get("in"), Site: strings.TrimSpace(q.Get("site"))}
	if d.In != "urls" {
		d.In = "text"
	}
	v := &view{Template: "search", Title: "Search", Nav: "search", Data: &d, Crumbs: []Crumb{{"Search", ""}}}
	if d.Q == "" {
		return v, nil
	}
	if len(d.Q) > 2048 {
		return nil, badRequestf("the search is longer than 2,048 characters")
	}
	v.Title = "Search: " + d.Q
	if strings.HasPrefix(d.Q, "http://") || strings.HasPrefix(d.Q, "https://") {
		d.Prefix, d.In = true, "urls"
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
	if d.In == "text" {
		return v, s.searchText(r, &d)
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
		d.Next = "/search?" + url.Values{"q": {d.Q}, "in": {"urls"}, "from": {strconv.FormatInt(next, 10)}}.Encode()
	} else {
		d.Done = true
	}
	return v, nil
}

func (s *Server) searchText(r *http.Request, d *searchData) error {
	ctx := r.Context()
	text, ok := s.opts.DB.(TextSearcher)
	if !ok {
		d.NoText = true
		return nil
	}
	match, err := store.ParseTextMatch(d.Q)
	if err != nil {
		return badRequestf("%v", err)
	}
	tq := store.TextQuery{Match: match, Limit: hitsPerPage + 1}
	if d.Site != "" {
		if tq.Hosts, err = s.siteHosts(r, d.Site); err != nil {
			return err
		}
	}
	if a := r.URL.Query().Get("after"); a != "" {
		score, id, ok := strings.Cut(a, ":")
		sc, err1 := strconv.ParseFloat(score, 64)
		n, err2 := strconv.ParseInt(id, 10, 64)
		if !ok || err1 != nil || err2 != nil {
			return badRequestf("after must be score:fetch, got %q", a)
		}
		tq.After = &store.TextHit{Score: sc, FetchID: n}
	}
	hits, err := text.SearchText(ctx, tq)
	if errors.Is(err, store.ErrBadQuery) {
		return badRequestf("strata cannot search for %q: put words or \"quoted phrases\", OR between alternatives, -word to leave one out", d.Q)
	}
	if err != nil {
		return err
	}
	hits, more := trim(hits, hitsPerPage)
	for _, h := range hits {
		d.Text = append(d.Text, textHit{TextHit: h, Parts: snippetParts(h.Snippet)})
	}
	if more {
		last := hits[len(hits)-1]
		next := url.Values{"q": {d.Q}, "after": {strconv.FormatFloat(last.Score, 'g', -1, 64) + ":" + strconv.FormatInt(last.FetchID, 10)}}
		if d.Site != "" {
			next.Set("site", d.Site)
		}
		d.Next = "/search?" + next.Encode()
	}
	d.Done = !more
	upto, newest, err := text.IndexCoverage(ctx)
	if err != nil {
		return err
	}
	d.Behind = upto < newest
	return nil
}

// siteHosts returns the host[:port]s of a politeness domain, and the text typed as a host too.
func (s *Server) siteHosts(r *http.Request, site string) ([]string, error) {
	origins, err := s.opts.DB.DomainOrigins(r.Context(), site)
	if err != nil {
		return nil, err
	}
	hosts := []string{site}
	for _, o := range origins {
		hosts = append(hosts, o.Host)
	}
	return hosts, nil
}

// snippetParts cuts a snippet at the store's match marks.
func snippetParts(s string) []snippetPart {
	var out []snippetPart
	for s != "" {
		i := strings.Index(s, store.SnippetOpen)
		if i < 0 {
			out = append(out, snippetPart{Text: s})
			break
		}
		if i > 0 {
			out = append(out, snippetPart{Text: s[:i]})
		}
		s = s[i+len(store.SnippetOpen):]
		j := strings.Index(s, store.SnippetClose)
		if j < 0 {
			j = len(s)
		}
		out = append(out, snippetPart{Text: s[:j], Match: true})
		s = strings.TrimPrefix(s[j:], store.SnippetClose)
	}
	return out
}
