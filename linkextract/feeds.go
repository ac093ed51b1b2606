package linkextract

import "strings"

// feedTypes are the media types of the feed formats strata reads (internal/hints, through gofeed).
// "application/json" is not among them: WordPress and others link their REST API with
// rel=alternate type=application/json on every page, and a JSON Feed names itself feed+json.
var feedTypes = map[string]bool{
	"application/rss+xml":   true,
	"application/atom+xml":  true,
	"application/feed+json": true,
}

// Feeds returns the feeds the page announces: its Alternates (link elements whose rel contains
// "alternate", resolved against the page's base like every other link) whose type is RSS, Atom or
// JSON Feed, in document order. Parameters such as "; charset=utf-8" are ignored. A URL that was first
// linked as another kind of alternate (a translation without a type) keeps that first occurrence in
// Alternates and is not reported here. Feeds returns nil when there are none.
func (p *Page) Feeds() []Link {
	var feeds []Link
	for _, l := range p.Alternates {
		typ, _, _ := strings.Cut(l.Type, ";")
		if feedTypes[strings.TrimSpace(typ)] {
			feeds = append(feeds, l)
		}
	}
	return feeds
}
