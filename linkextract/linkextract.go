// Package linkextract finds the links of one HTML page, resolved and normalised, together with the
// robots directives that say whether the crawler may follow them.
//
// Extract reads a page once and reports what it found; it decides nothing. Whether nofollow links,
// alternates or nofollow pages are followed is the crawler's policy, so both the per-link rel and the
// per-page meta robots directives are exposed rather than applied.
//
// Sources. Links come from a[href] and area[href], the elements a visitor can follow. Feeds and
// other alternate versions come from link[href] whose rel contains "alternate" (but not "stylesheet"
// or "icon", which name alternate style sheets and icons, not pages) and are kept apart in
// Page.Alternates. Frames, iframes, meta refresh, scripts and images are not read: they are embedded
// resources or redirects, not links. Anchors inside <template> (inert markup that client code
// stamps out, often with placeholders such as "{{url}}") and SVG or MathML anchors are ignored.
// <noscript> content is parsed as markup, because strata runs no scripts and sees the page a
// scriptless browser would show.
//
// Resolution follows browsers: the base is the first <base> element that has an href attribute,
// resolved against the page URL; if that href is not a usable http(s) URL the page URL is the base
// and later <base> elements are still ignored. Surrounding white space and embedded tabs and
// newlines are removed from every href, and a backslash before the query counts as a slash. Every
// URL then goes through urlnorm, so Link.URL is canonical and carries no fragment.
//
// Self-links are not listed: a link whose canonical URL is the page's own URL (including
// fragment-only links such as "#top" and the empty href) can only lead back to the page just
// fetched, so it is counted in Page.Self instead.
//
// Nofollow: Link.NoFollow is set when rel contains "nofollow", "sponsored" or "ugc". Google treats
// sponsored and ugc as nofollow variants, and site owners use all three to say "we do not vouch for
// this target", which is what a polite crawler wants to know; Link.Rel keeps the exact tokens for a
// policy that wants to tell them apart.
//
// Pages that the HTML parser refuses (it gives up on more than 512 nested open elements, which
// broken or hostile pages reach) are read by a tokenizer instead, so such a page still yields its
// links; that fallback does not build a tree, so it cannot tell SVG anchors or template content
// apart and reads anchor text up to the next </a> or <a>.
package linkextract

import (
	"fmt"
	"net/url"
	"strings"

	"golang.org/x/net/html"

	"github.com/strata-crawler/strata/internal/htmltree"
	"github.com/strata-crawler/strata/internal/urlnorm"
)

const (
	// DefaultMaxLinks is the link budget used when Options.MaxLinks is zero or negative.
	DefaultMaxLinks = 10_000
	// MaxTextBytes bounds Link.Text: anchor text is a label, and trap pages put megabytes in one.
	MaxTextBytes = 200
	// MaxTitleBytes bounds Page.Title for the same reason.
	MaxTitleBytes = 1024
	// MaxHrefBytes is the longest href, in bytes after entity decoding and before normalisation,
	// that Extract resolves. Longer ones are counted in Page.Dropped: strata's URL filters refuse
	// URLs over 2,048 bytes by default anyway, and resolving them first would only cost time.
	MaxHrefBytes = 2048
)

// Link is one link target found on a page.
type Link struct {
	// URL is the canonical absolute http(s) URL (urlnorm), without fragment.
	URL string `json:"url"`
	// Text is the anchor text (with the alt text of images inside the anchor), the alt attribute
	// for <area>, or the title attribute for <link>; white space collapsed, at most MaxTextBytes of
	// valid UTF-8. For duplicates it is the first occurrence's.
	Text string `json:"text,omitempty"`
	// Tag is the element the link came from: "a" or "area" in Page.Links, "link" in Page.Alternates.
	Tag string `json:"tag"`
	// Rel is the rel attribute as written, lower-cased, white space collapsed to single spaces.
	Rel string `json:"rel,omitempty"`
	// Type is the type attribute, trimmed and lower-cased: the feed format for alternates
	// ("application/rss+xml"), a MIME hint for anchors.
	Type string `json:"type,omitempty"`
	// NoFollow reports rel "nofollow", "sponsored" or "ugc". For a URL linked several times it is
	// true only if every occurrence read (see Page.Truncated) said so: one followable link suffices.
	NoFollow bool `json:"nofollow,omitempty"`
}

// Page is what Extract found in one page.
type Page struct {
	// Links are the a and area links in document order, one per URL, first occurrence kept.
	Links []Link `json:"links"`
	// Alternates are the link rel=alternate targets (feeds, translations), one per URL.
	Alternates []Link `json:"alternates"`
	// Base is the canonical URL relative references were resolved against.
	Base string `json:"base"`
	// Title is the first <title>, white space collapsed, at most MaxTitleBytes of valid UTF-8.
	Title string `json:"title"`
	// NoFollow and NoIndex report the page's meta robots directives: content "nofollow", "noindex"
	// or "none" (both) in <meta name="robots"> or <meta name="strata">, any case, anywhere in the page.
	NoFollow bool `json:"nofollow"`
	NoIndex  bool `json:"noindex"`
	// Dropped counts hrefs that give no crawlable URL: other schemes (javascript:, mailto:, tel:,
	// data:, ftp: …), URLs urlnorm refuses (user information, bad hosts or ports), unparseable
	// references and hrefs longer than MaxHrefBytes.
	Dropped int `json:"dropped"`
	// Self counts links to the page itself, which are not listed (see the package documentation).
	Self int `json:"self"`
	// Truncated counts the link elements left unread once Options.MaxLinks distinct links were
	// collected. They were not resolved, so the count includes duplicates and hrefs that would have
	// been dropped; it is an upper bound on the links lost.
	Truncated int `json:"truncated"`
}

// Options tune Extract. The zero value is ready to use.
type Options struct {
	// MaxLinks bounds len(Links)+len(Alternates); zero or negative means DefaultMaxLinks. Once it is
	// reached Extract stops resolving, which keeps a page of a hundred thousand links cheap.
	MaxLinks int
}

// Extract returns the links of the HTML page src, which was fetched from pageURL (the final URL
// after redirects). src should be UTF-8; invalid bytes are tolerated and show up as U+FFFD in text.
// The only error is an invalid pageURL; any byte string is a page. Extract is safe for concurrent use.
func Extract(pageURL string, src []byte, opts Options) (*Page, error) {
	page, err := urlnorm.Parse(pageURL)
	if err != nil {
		return nil, fmt.Errorf("linkextract: page URL: %w", err)
	}
	var s scan
	if root, err := htmltree.Parse(src); err == nil { // html.Parse's tree at less cost
		s.tree(root, true)
	} else {
		s.tokens(src)
	}
	return s.page(page, opts.maxLinks()), nil
}

// ExtractTree is Extract for a page the caller has parsed already, so that one parse serves
// everything read from the page: doc is what html.Parse returned for it (scripting on, the tree
// that text extraction reads too; <noscript> content, which that parse keeps as text, is parsed
// as markup here, as a scriptless browser shows it; the one difference from a parse with scripting
// off is broken markup: a tag or comment left open at the end of a <noscript> ends there, where
// that parse reads it on past "</noscript>", and a <noscript> left open in a <template> keeps what
// follows in the template). ExtractTree does not modify doc. A page that
// html.Parse refuses (nested too deeply) has no tree: give it to Extract, which reads its tokens.
func ExtractTree(pageURL string, doc *html.Node, opts Options) (*Page, error) {
	page, err := urlnorm.Parse(pageURL)
	if err != nil {
		return nil, fmt.Errorf("linkextract: page URL: %w", err)
	}
	var s scan
	s.tree(doc, true)
	return s.page(page, opts.maxLinks()), nil
}

func (o Options) maxLinks() int {
	if o.MaxLinks <= 0 {
		return DefaultMaxLinks
	}
	return o.MaxLinks
}

// page resolves the scanned candidates into a Page.
func (s *scan) page(pageURL *url.URL, maxLinks int) *Page {
	self := pageURL.String()
	p := &Page{Base: self, Title: s.title.String(), NoFollow: s.noFollow, NoIndex: s.noIndex}
	base := pageURL
	if s.hasBase {
		if u, err := resolve(pageURL, s.base); err == nil {
			base, p.Base = u, u.String()
		}
	}

	n := min(len(s.cands), maxLinks)
	p.Links = make([]Link, 0, n)
	p.Alternates = []Link{}
	seen := make(map[string]int, n)
	var seenAlt map[string]int // alternates are rare; most pages never need this map
	// Pages repeat hrefs verbatim (navigation in header and footer, per-item links), and resolving
	// costs more than a map lookup; "" records a dropped href.
	resolved := make(map[string]string, n)

	for i := range s.cands {
		if len(p.Links)+len(p.Alternates) >= maxLinks {
			p.Truncated = len(s.cands) - i
			break
		}
		c := &s.cands[i]
		if len(c.href) > MaxHrefBytes {
			p.Dropped++
			continue
		}
		target, known := resolved[c.href]
		if !known {
			if u, err := urlnorm.ResolveString(base, c.href); err == nil {
				target = u
			}
			resolved[c.href] = target
		}
		if target == "" {
			p.Dropped++
			continue
		}
		if target == self {
			p.Self++
			continue
		}
		rel := collapseRel(c.rel)
		nf := relNoFollow(rel)

		list, index := &p.Links, seen
		if c.tag == "link" {
			if seenAlt == nil {
				seenAlt = make(map[string]int)
			}
			list, index = &p.Alternates, seenAlt
		}
		if j, dup := index[target]; dup {
			(*list)[j].NoFollow = (*list)[j].NoFollow && nf
			continue
		}
		index[target] = len(*list)
		*list = append(*list, Link{
			URL:      target,
			Text:     s.text(c),
			Tag:      c.tag,
			Rel:      rel,
			Type:     strings.ToLower(strings.TrimSpace(c.typ)),
			NoFollow: nf,
		})
	}
	return p
}

// resolve turns href into a canonical URL, resolving it against base the way browsers do.
func resolve(base *url.URL, href string) (*url.URL, error) {
	return urlnorm.Resolve(base, href)
}

// collapseRel lower-cases rel (ASCII only, as HTML compares rel tokens) and collapses its HTML
// white space, allocating only when it must.
func collapseRel(rel string) string {
	clean := true
	for i := 0; i < len(rel) && clean; i++ {
		c := rel[i]
		clean = !('A' <= c && c <= 'Z') && c != '\t' && c != '\n' && c != '\f' && c != '\r' &&
			!(c == ' ' && (i == 0 || i == len(rel)-1 || rel[i+1] == ' '))
	}
	if clean {
		return rel
	}
	b := make([]byte, 0, len(rel))
	for i := 0; i < len(rel); i++ {
		c := rel[i]
		switch {
		case isHTMLSpace(c):
			if len(b) > 0 && b[len(b)-1] != ' ' {
				b = append(b, ' ')
			}
		case 'A' <= c && c <= 'Z':
			b = append(b, c+'a'-'A')
		default:
			b = append(b, c)
		}
	}
	if len(b) > 0 && b[len(b)-1] == ' ' {
		b = b[:len(b)-1]
	}
	return string(b)
}

// isHTMLSpace reports ASCII white space as HTML defines it (no vertical tab).
func isHTMLSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// relNoFollow reports whether a collapsed rel asks not to vouch for the target.
func relNoFollow(rel string) bool {
	return hasToken(rel, "nofollow") || hasToken(rel, "sponsored") || hasToken(rel, "ugc")
}

// hasToken reports whether the collapsed, lower-case rel contains tok.
func hasToken(rel, tok string) bool {
	for rel != "" {
		t, rest, _ := strings.Cut(rel, " ")
		if t == tok {
			return true
		}
		rel = rest
	}
	return false
}
