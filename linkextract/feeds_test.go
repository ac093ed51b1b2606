package linkextract

import (
	"reflect"
	"testing"
)

// feed is shorthand for a feed Link in the tables.
func feed(u, typ, title string) Link {
	return Link{URL: u, Text: title, Tag: "link", Rel: "alternate", Type: typ}
}

func TestFeeds(t *testing.T) {
	tests := []struct {
		name string
		html string
		want []Link
	}{
		{name: "rss atom and json feed",
			html: `<head><link rel="alternate" type="application/rss+xml" title="RSS" href="/feed.rss">` +
				`<link rel="alternate" type="application/atom+xml" href="atom.xml">` +
				`<link rel="alternate" type="application/feed+json" href="https://example.com/feed.json"></head>`,
			want: []Link{
				feed("https://example.com/feed.rss", "application/rss+xml", "RSS"),
				feed("https://example.com/dir/atom.xml", "application/atom+xml", ""),
				feed("https://example.com/feed.json", "application/feed+json", ""),
			}},
		{name: "type case and parameters",
			html: `<link rel="Alternate" type=" Application/RSS+XML; charset=UTF-8 " href="/r">`,
			want: []Link{feed("https://example.com/r", "application/rss+xml; charset=utf-8", "")}},
		{name: "resolved against base",
			html: `<base href="https://blog.example.org/posts/"><link rel=alternate type=application/atom+xml href="../feed/">`,
			want: []Link{feed("https://blog.example.org/feed/", "application/atom+xml", "")}},
		{name: "other rel tokens kept",
			html: `<link rel="alternate nofollow" type="application/rss+xml" href="/r">`,
			want: []Link{{URL: "https://example.com/r", Tag: "link", Rel: "alternate nofollow", Type: "application/rss+xml", NoFollow: true}}},
		{name: "one per URL",
			html: `<link rel=alternate type=application/rss+xml href=/r title=First><link rel=alternate type=application/rss+xml href=/r title=Second>`,
			want: []Link{feed("https://example.com/r", "application/rss+xml", "First")}},
		{name: "not feeds",
			html: `<link rel="alternate" hreflang="fr" href="/fr/">` +
				`<link rel="alternate" type="application/json" href="/wp-json/wp/v2/pages/2">` +
				`<link rel="alternate" type="text/html" href="/amp/">` +
				`<link rel="alternate" type="application/rdf+xml" href="/foaf.rdf">` +
				`<link rel="alternate stylesheet" type="application/rss+xml" href="/odd.css">` +
				`<link rel="feed" type="application/rss+xml" href="/not-alternate">` +
				`<a href="/feed.rss" type="application/rss+xml">anchor</a>` +
				`<link rel="alternate" type="application/rss+xml" href="javascript:void(0)">`,
			want: nil},
		{name: "no alternates", html: `<p>nothing</p>`, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Extract(pageURL, []byte(tt.html), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Feeds(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Feeds() =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}
